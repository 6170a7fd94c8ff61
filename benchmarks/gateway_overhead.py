"""Part 1 of ``bench_gateway.py``: what the gateway adds to a call, against a minimal proxy.

One test host that answers at once (or a real engine); four paths to it, measured call by
call in turn (direct, the gateway, ``minimal_proxy.py`` and the same proxy holding its
reply until the first event), so that the machine's load and the engine's drift weigh on
all alike:

- non-stream: milliseconds per call (p50, p99); the added latency is the path's p50 minus
  the direct p50, and ``added x`` is the gateway's added latency over the minimal proxy's;
- stream: time to the first byte of the body (TTFB), added over direct, likewise, twice:
  on a prompt no path has sent before (its prefill is on the first byte's path, as an
  agent's next turn has new tokens to prefill) and on the same prompt again at once (a
  real engine's prompt cache answers it: almost no prefill, so the ratio shows the paths'
  own fixed cost, the least favourable case for a proxy); and
  ``added x held`` against the minimal proxy that starts its reply only once the first
  event is in (``--hold-first-event``), as the gateway does so that a host failing before
  it is retried and the client still gets a real status: against a real engine the plain
  proxy sends its headers while the engine prefills, which moves the client's own header
  work off the first byte's path; the held one pays it, as the gateway does;
- throughput: ``--concurrency`` (32) clients at once for a fixed number of calls; requests
  per second of the gateway over the minimal proxy's.

    python benchmarks/bench_gateway.py --overhead-only
"""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import httpx

HostFn = Callable[..., contextlib.AbstractContextManager[str]]


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def body_for(model: str, stream: bool, i: int, tag: str = "") -> dict:
    """Call ``i`` of a round; ``tag`` names the round, so that no round's prompt is one an
    engine's prompt cache kept from another round."""
    return {
        "model": model,
        "max_tokens": 4,
        "stream": stream,
        "messages": [{"role": "user", "content": f"ping {tag}{i} " + "x" * 400}],
    }


def measure(
    client: httpx.Client,
    url: str,
    model: str,
    stream: bool,
    n: int,
    first: int = 0,
    tag: str = "",
) -> list[float]:
    """Milliseconds per call, one call at a time: the whole call (non-stream) or the time
    to the first byte of the body (stream; the rest is read after the clock stops).
    Calls ``first`` .. ``first + n - 1`` (each prompt differs from the others)."""
    out = []
    for i in range(first, first + n):
        for attempt in (1, 2):
            t0 = time.perf_counter()
            try:
                t1 = _one_call(client, url, model, stream, i, tag)
                break
            except httpx.RemoteProtocolError:
                # a pooled connection the host had closed (llama.cpp's server closes some
                # after a stream): the client's artefact, not the path's time; again anew
                if attempt == 2:
                    raise
        out.append((t1 - t0) * 1000)
    return out


def _one_call(
    client: httpx.Client, url: str, model: str, stream: bool, i: int, tag: str = ""
) -> float:
    """One call; the clock reading at its end (non-stream) or at its first byte (stream)."""
    with client.stream(
        "POST",
        url + "/v1/chat/completions",
        json=body_for(model, stream, i, tag),
        headers={"Authorization": "Bearer key-0"},
    ) as r:
        if r.status_code != 200:
            r.read()
            raise AssertionError(f"{url}: HTTP {r.status_code}: {r.text[:300]}")
        if stream:
            chunks = r.iter_raw()
            head = next(chunks, b"")
            t1 = time.perf_counter()
            assert head, "an empty stream"
            for _ in chunks:  # the rest, so that the connection is reused
                pass
        else:
            r.read()
            t1 = time.perf_counter()
    return t1


def latency(targets: dict[str, tuple[str, str]], n: int) -> dict:
    results = {}
    # a connection idle for a few seconds may have been closed by the host (llama.cpp's
    # server drops idle ones after 5 s): the client lets them go sooner, as the gateway does
    with httpx.Client(timeout=60, limits=httpx.Limits(keepalive_expiry=1.0)) as c:
        for stream in (False, True):
            for url, model in targets.values():
                measure(c, url, model, stream, 20, tag="warm-")  # warm up every path
            ms: dict[str, list[float]] = {k: [] for k in targets}
            again: dict[str, list[float]] = {k: [] for k in targets}
            # call by call, each path in turn and the order rotated: a real engine's own
            # time drifts (its cache, the machine), and blocks of calls would carry that
            # drift into one path's figures
            names = list(targets)
            tag = "stream-" if stream else "call-"
            for i in range(n):
                turn = names[i % len(names) :] + names[: i % len(names)]
                for j, k in enumerate(turn):  # a prompt of its own: no engine cache hits
                    url, model = targets[k]
                    ms[k] += measure(c, url, model, stream, 1, i * len(names) + j, tag)
                    if stream:  # the same prompt at once: the engine's cache answers it
                        again[k] += measure(c, url, model, stream, 1, i * len(names) + j, tag)
            if stream:
                results["stream TTFB"] = _figures(ms)
                results["stream TTFB, cached"] = _figures(again)
            else:
                results["non-stream"] = _figures(ms)
    return results


def _figures(ms: dict[str, list[float]]) -> dict[str, float]:
    """One mode's p50s and p99s per path, and the gateway's ratios."""
    direct, via, anchor = ms["direct"], ms["gateway"], ms["minimal"]
    added = statistics.median(via) - statistics.median(direct)
    added_min = statistics.median(anchor) - statistics.median(direct)
    added_held = statistics.median(ms["held"]) - statistics.median(direct)
    return {
        "direct_p50_ms": statistics.median(direct),
        "direct_p99_ms": pct(direct, 0.99),
        "gateway_p50_ms": statistics.median(via),
        "gateway_p99_ms": pct(via, 0.99),
        "added_p50_ms": added,
        "added_p99_ms": pct(via, 0.99) - pct(direct, 0.99),
        "minimal_p50_ms": statistics.median(anchor),
        "minimal_added_p50_ms": added_min,
        "vs_minimal": statistics.median(via) / statistics.median(anchor),
        "vs_direct": statistics.median(via) / statistics.median(direct),
        "minimal_vs_direct": statistics.median(anchor) / statistics.median(direct),
        "added_vs_minimal": added / added_min if added_min > 0 else float("nan"),
        "held_added_p50_ms": added_held,
        "added_vs_held": added / added_held if added_held > 0 else float("nan"),
    }


async def burst(url: str, model: str, concurrency: int, calls: int) -> float:
    """Requests per second: ``calls`` non-streamed calls, ``concurrency`` at a time."""
    limits = httpx.Limits(
        max_connections=concurrency, max_keepalive_connections=concurrency, keepalive_expiry=1.0
    )
    async with httpx.AsyncClient(timeout=60, limits=limits) as client:
        queue = iter(range(calls))

        async def worker() -> None:
            for i in queue:
                try:
                    r = await client.post(
                        url + "/v1/chat/completions",
                        json=body_for(model, False, i, "burst-"),
                        headers={"Authorization": f"Bearer key-{i % 200}"},
                    )
                except httpx.HTTPError as exc:
                    raise RuntimeError(f"{url}: call {i}: {type(exc).__name__}: {exc}") from exc
                assert r.status_code == 200, r.text

        t0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return calls / (time.perf_counter() - t0)


def throughput(
    targets: dict[str, tuple[str, str]], concurrency: int, calls: int, rounds: int
) -> dict:
    rps: dict[str, list[float]] = {k: [] for k in targets}
    for url, model in targets.values():
        asyncio.run(burst(url, model, concurrency, concurrency * 2))  # warm up
    for _ in range(rounds):
        for k, (url, model) in targets.items():
            rps[k].append(asyncio.run(burst(url, model, concurrency, calls)))
    gw, mini = statistics.median(rps["gateway"]), statistics.median(rps["minimal"])
    return {
        "concurrency": concurrency,
        "calls": calls,
        "gateway_rps": gw,
        "minimal_rps": mini,
        "direct_rps": statistics.median(rps["direct"]),
        "vs_minimal": gw / mini,
        # throughput as a cost: direct's requests/s over the gateway's (<= 1.1 the goal)
        "direct_over_gateway": statistics.median(rps["direct"]) / gw,
    }


def overhead(
    workdir: Path,
    n: int,
    *,
    test_host: HostFn,
    gateway: Callable[..., contextlib.AbstractContextManager[tuple[str, Path]]],
    minimal_proxy: HostFn,
    fleet_dict: Callable[..., dict],
    model: str,
    rounds: int = 10,
    concurrency: int = 32,
    calls: int = 400,
) -> dict:
    """Direct, gateway and minimal proxy in front of one instant host."""
    with contextlib.ExitStack() as stack:
        host = stack.enter_context(test_host(1e9, 1e9, parallel=concurrency * 2))
        fleet = fleet_dict({"h": host}, workdir)
        fleet["hosts"][0]["max_parallel"] = concurrency * 2  # the gateway never queues
        gw, _ = stack.enter_context(gateway(fleet, workdir, "overhead"))
        mini = stack.enter_context(minimal_proxy(host))
        held = stack.enter_context(minimal_proxy(host, hold=True))
        targets = {
            "direct": (host, model),
            "gateway": (gw, "coder"),
            "minimal": (mini, model),
            "held": (held, model),
        }
        results = latency(targets, n)
        del targets["held"]  # it differs from the minimal proxy on streams only
        results["throughput"] = throughput(targets, concurrency, calls, max(3, rounds // 2))
    return results


def report_direct(res: dict) -> list[str]:
    """The figures anchored on the host itself (``--engine``): the gateway over direct."""
    o = res["overhead"]
    t = o["throughput"]
    load = res.get("load_average")
    lines = [
        "",
        "== gateway x the engine called directly (p50s, interleaved call by call) ==",
        f"non-stream latency: direct {o['non-stream']['direct_p50_ms']:.2f} ms, gateway "
        f"{o['non-stream']['gateway_p50_ms']:.2f} ms: {o['non-stream']['vs_direct']:.3f}x "
        f"(minimal proxy {o['non-stream']['minimal_vs_direct']:.3f}x)",
        *(
            f"{mode}: direct {o[mode]['direct_p50_ms']:.2f} ms, gateway "
            f"{o[mode]['gateway_p50_ms']:.2f} ms: {o[mode]['vs_direct']:.3f}x "
            f"(minimal proxy {o[mode]['minimal_vs_direct']:.3f}x)"
            for mode in ("stream TTFB", "stream TTFB, cached")
        ),
        f"throughput at concurrency {t['concurrency']}: direct {t['direct_rps']:.1f} req/s, "
        f"gateway {t['gateway_rps']:.1f}: {t['direct_over_gateway']:.3f}x (direct / gateway)",
        "goal: each <= 1.1x on a quiet machine",
    ]
    if load:
        lines.append(
            "load average (1/5/15 min) before: {:.2f} {:.2f} {:.2f}; after: "
            "{:.2f} {:.2f} {:.2f}".format(*load)
        )
    return lines


def report_overhead(res: dict, anchor: str = "minimal") -> list[str]:
    if anchor == "direct":
        return report_overhead(res) + report_direct(res)
    lines = [
        "",
        "== gateway overhead (ms per call; host answers instantly; anchor: minimal proxy,"
        " interleaved) ==",
        f"{'':20}{'direct p50':>12}{'gateway p50':>13}{'added p50':>11}"
        f"{'direct p99':>12}{'gateway p99':>13}{'added p99':>11}"
        f"{'minimal p50':>13}{'min added':>11}{'x minimal':>11}{'added x':>9}"
        f"{'held added':>12}{'added x held':>14}",
    ]
    for mode, o in res["overhead"].items():
        if mode == "throughput":
            continue
        lines.append(
            f"{mode:20}{o['direct_p50_ms']:12.2f}{o['gateway_p50_ms']:13.2f}"
            f"{o['added_p50_ms']:11.2f}{o['direct_p99_ms']:12.2f}"
            f"{o['gateway_p99_ms']:13.2f}{o['added_p99_ms']:11.2f}"
            f"{o['minimal_p50_ms']:13.2f}{o['minimal_added_p50_ms']:11.2f}"
            f"{o['vs_minimal']:11.2f}{o['added_vs_minimal']:9.2f}"
            f"{o['held_added_p50_ms']:12.2f}{o['added_vs_held']:14.2f}"
        )
    t = res["overhead"].get("throughput")
    if t:
        lines.append(
            f"throughput at concurrency {t['concurrency']} ({t['calls']} calls a round): "
            f"gateway {t['gateway_rps']:.1f} req/s, minimal {t['minimal_rps']:.1f}, direct "
            f"{t['direct_rps']:.1f}; gateway x minimal {t['vs_minimal']:.2f} (goal >= 1.0)"
        )
    lines.append(
        "goals: non-stream 'added x' <= 1.1, stream TTFB 'added x' <= 1.1 "
        "(added x = gateway's added p50 over the minimal proxy's; added x held: over the "
        "minimal proxy that, like the gateway, answers once the first event is in)"
    )
    return lines
