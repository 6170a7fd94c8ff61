"""Gateway benchmark: overhead, makespan against the ideal, prefill saved by affinity.

Everything runs on 127.0.0.1: test hosts (``python -m harness.testing.lmstudio``) and the
gateway (``python -m harness.cli gateway serve``) as subprocesses, the load from here.
Speeds are the issue's 350 / 1200 / 2200 prefill tokens/s (decode a tenth of that),
multiplied by ``--speedup`` so that the run takes well under two minutes.

1. overhead (``gateway_overhead.py``): the same small calls direct to a host, through the
   gateway and through a minimal proxy, interleaved; the milliseconds each adds (non-stream
   whole call, stream time to first byte) and requests/s at concurrency 32.
2. makespan: a fixed burst of calls on the heterogeneous fleet, for this router and for
   plain round-robin, against the ideal (total work / total capacity).
3. affinity: multi-turn conversations, with and without host affinity; prefill tokens
   the hosts computed, and how many the warm prompt cache saved.

With ``--engine`` part 1 runs against a real engine instead of the test host:
llama.cpp's server in the ``engine`` image on the built-in model (SmolLM2-135M, Q4_1), as
harness's built-in fleet runs it (``tests/support/engine.py``), and the anchor is the
engine itself: the gateway's figures over calling the engine directly, interleaved call by
call, as ratios (non-stream latency, stream TTFB, throughput at concurrency 32), with the
machine's load average before and after.

    python benchmarks/bench_gateway.py [--speedup 20] [--json out.json] [--engine]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.fleet.bench import run_bench, save_bench  # noqa: E402
from harness.fleet.config import parse_fleet  # noqa: E402
from harness.fleet.telemetry import read_jsonl  # noqa: E402

sys.path.insert(0, str(ROOT / "benchmarks"))
from gateway_overhead import overhead, report_overhead  # noqa: E402

MODEL = "bench/model"
BASE_SPEEDS = {"slow": 350, "mid": 1200, "fast": 2200}  # prefill tokens/s (issue's figures)
DECODE_RATIO = 0.1


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url: str, proc: subprocess.Popen, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args} exited with {proc.returncode}")
        with contextlib.suppress(httpx.HTTPError):
            httpx.get(url, timeout=1)
            return
        time.sleep(0.05)
    raise RuntimeError(f"{url} did not come up")


def stop(proc: subprocess.Popen) -> None:
    """SIGTERM, and SIGKILL after 10 s; waited for either way."""
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextlib.contextmanager
def process(args: list[str], probe_url: str) -> Iterator[subprocess.Popen]:
    proc = subprocess.Popen(
        [sys.executable, *args], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        wait_http(probe_url, proc)
        yield proc
    finally:
        stop(proc)


@contextlib.contextmanager
def test_host(prefill: float, decode: float, **extra: object) -> Iterator[str]:
    port = free_port()
    args = [
        "-m",
        "harness.testing.lmstudio",
        "--port",
        str(port),
        "--model",
        MODEL,
        "--prefill",
        str(prefill),
        "--decode",
        str(decode),
    ]
    for k, v in extra.items():
        args += [f"--{k.replace('_', '-')}", str(v)]
    url = f"http://127.0.0.1:{port}"
    with process(args, url + "/v1/models"):
        yield url


@contextlib.contextmanager
def gateway(fleet: dict, workdir: Path, name: str) -> Iterator[tuple[str, Path]]:
    port = free_port()
    fleet_path = workdir / f"fleet-{name}.yml"
    fleet_path.write_text(yaml.safe_dump(fleet))
    tele = workdir / f"telemetry-{name}.jsonl"
    keys = workdir / "keys.yml"
    keys.write_text(
        yaml.safe_dump({f"key-{i}": {"trial": f"trial-{i}", "agent": "bench"} for i in range(200)})
    )
    url = f"http://127.0.0.1:{port}"
    with process(
        [
            "-m",
            "harness.cli",
            "gateway",
            "serve",
            "--port",
            str(port),
            "--fleet",
            str(fleet_path),
            "--telemetry",
            str(tele),
            "--keys",
            str(keys),
        ],
        url + "/health",
    ):
        yield url, tele


def fleet_dict(
    urls: dict[str, str], workdir: Path, upstream: str = MODEL, **routing: object
) -> dict:
    return {
        "hosts": [
            {"name": n, "base_url": u, "max_parallel": 1, "watts": 300} for n, u in urls.items()
        ],
        "models": {"coder": {"upstream": upstream}},
        "routing": {"cooldown": {"base_s": 0.5, "max_s": 5}, **routing},
        "bench_file": str(workdir / "fleet-bench.json"),
    }


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


@contextlib.contextmanager
def engine_host(prefill: float, decode: float, parallel: int = 4, **extra: object) -> Iterator[str]:
    """llama.cpp's server in the engine image on the built-in model (``--engine``): a real
    engine in place of the test host (its speed is its own; the speeds are ignored). One
    slot per client up to 32, 512 tokens of context each (the calls are short)."""
    from tests.support.engine import engine

    with engine(parallel=min(parallel, 32), context=512) as host:
        yield host.url


@contextlib.contextmanager
def minimal_proxy(upstream: str, hold: bool = False) -> Iterator[str]:
    """The anchor: ``benchmarks/minimal_proxy.py`` in front of the same host (``hold``:
    a streamed reply starts once the first event is in, as the gateway's does)."""
    port = free_port()
    script = str(ROOT / "benchmarks" / "minimal_proxy.py")
    url = f"http://127.0.0.1:{port}"
    extra = ["--hold-first-event"] if hold else []
    with process([script, "--port", str(port), "--upstream", upstream, *extra], url + "/health"):
        yield url


# ---- 1. overhead: gateway_overhead.py ------------------------------------------------------
# ---- 2. makespan -------------------------------------------------------------------------
def workload(n: int, seed: int = 11) -> list[tuple[int, int]]:
    """(prompt characters, completion tokens) per call: a fixed mixed burst."""
    rnd = random.Random(seed)
    return [
        (rnd.choice([2000, 4000, 8000, 16000, 24000]), rnd.choice([16, 32, 64])) for _ in range(n)
    ]


def ideal_seconds(jobs: list[tuple[int, int]], speeds: dict[str, float]) -> float:
    """Total work / total capacity: each host's decode is DECODE_RATIO x its prefill, so a
    job is P/p + C/(r p) host-seconds on a host of prefill p; capacity adds up."""
    work = sum(chars / 4 + c / DECODE_RATIO for chars, c in jobs)  # in prefill-token units
    return work / sum(speeds.values())


async def burst(url: str, jobs: list[tuple[int, int]], tag: str) -> float:
    async with httpx.AsyncClient(timeout=300) as client:

        async def one(i: int, chars: int, completion: int) -> None:
            body = {
                "model": "coder",
                "max_tokens": completion,
                "messages": [{"role": "user", "content": f"{tag} job {i} " + "y" * chars}],
            }
            r = await client.post(
                url + "/v1/chat/completions",
                json=body,
                headers={"Authorization": f"Bearer key-{i % 200}"},
            )
            r.raise_for_status()

        t0 = time.monotonic()
        await asyncio.gather(*(one(i, p, c) for i, (p, c) in enumerate(jobs)))
        return time.monotonic() - t0


def makespans(workdir: Path, urls: dict[str, str], speeds: dict[str, float], n_jobs: int) -> dict:
    jobs = workload(n_jobs)
    ideal = ideal_seconds(jobs, speeds)
    out = {"jobs": n_jobs, "ideal_s": ideal}
    for name, routing in (
        ("earliest_finish", {"strategy": "earliest_finish"}),
        ("round_robin", {"strategy": "round_robin"}),
    ):
        fleet = fleet_dict(urls, workdir, **routing)
        with gateway(fleet, workdir, f"makespan-{name}") as (gw, tele):
            took = asyncio.run(burst(gw, jobs, f"{name}-{time.time()}"))
        rows = read_jsonl(tele)
        per_host = {h: sum(1 for r in rows if r["host"] == h) for h in urls}
        out[name] = {"makespan_s": took, "vs_ideal": took / ideal, "calls_per_host": per_host}
    return out


# ---- 3. affinity -------------------------------------------------------------------------
async def conversations(url: str, n_conv: int, turns: int, tag: str) -> float:
    async with httpx.AsyncClient(timeout=300) as client:

        async def convo(c: int) -> None:
            msgs = [{"role": "system", "content": f"{tag} conversation {c}. " + "s" * 12000}]
            for t in range(turns):
                msgs.append({"role": "user", "content": f"turn {t}: " + "u" * 1200})
                r = await client.post(
                    url + "/v1/chat/completions",
                    json={"model": "coder", "max_tokens": 24, "messages": msgs},
                    headers={"Authorization": f"Bearer key-{c}"},
                )
                r.raise_for_status()
                msgs.append(r.json()["choices"][0]["message"])

        t0 = time.monotonic()
        await asyncio.gather(*(convo(c) for c in range(n_conv)))
        return time.monotonic() - t0


def affinity(workdir: Path, urls: dict[str, str], n_conv: int, turns: int) -> dict:
    out = {"conversations": n_conv, "turns": turns}
    for name, on in (("affinity_on", True), ("affinity_off", False)):
        fleet = fleet_dict(urls, workdir, affinity=on)
        with gateway(fleet, workdir, name) as (gw, tele):
            took = asyncio.run(conversations(gw, n_conv, turns, f"{name}-{time.time()}"))
        rows = [r for r in read_jsonl(tele) if r["status"] == 200]
        prompt = sum(r["prompt_tokens"] for r in rows)
        cached = sum(r["cached_tokens"] for r in rows)
        out[name] = {
            "wall_s": took,
            "prompt_tokens": prompt,
            "cached_tokens": cached,
            "prefill_tokens": prompt - cached,
            "hosts_per_trial": statistics.mean(
                len({r["host"] for r in rows if r["trial"] == t})
                for t in {r["trial"] for r in rows}
            ),
        }
    on, off = out["affinity_on"], out["affinity_off"]
    out["prefill_tokens_saved"] = off["prefill_tokens"] - on["prefill_tokens"]
    return out


# ---- report ------------------------------------------------------------------------------
def report(res: dict) -> str:
    lines = report_overhead(res)
    m = res["makespan"]
    lines += [
        "",
        f"== makespan: {m['jobs']} calls on hosts of prefill "
        + " / ".join(f"{v:g}" for v in res["speeds"].values())
        + " tok/s ==",
        f"{'router':18}{'makespan s':>12}{'ideal s':>10}{'x ideal':>9}  calls per host",
    ]
    for name in ("earliest_finish", "round_robin"):
        r = m[name]
        lines.append(
            f"{name:18}{r['makespan_s']:12.2f}{m['ideal_s']:10.2f}"
            f"{r['vs_ideal']:9.2f}  {r['calls_per_host']}"
        )
    a = res["affinity"]
    lines += [
        "",
        f"== host affinity: {a['conversations']} conversations x {a['turns']} turns ==",
        f"{'':14}{'prompt tok':>12}{'cached tok':>12}{'prefilled tok':>15}"
        f"{'hosts/trial':>13}{'wall s':>9}",
    ]
    for name in ("affinity_on", "affinity_off"):
        r = a[name]
        lines.append(
            f"{name:14}{r['prompt_tokens']:12d}{r['cached_tokens']:12d}"
            f"{r['prefill_tokens']:15d}{r['hosts_per_trial']:13.2f}{r['wall_s']:9.2f}"
        )
    saved = a["prefill_tokens_saved"]
    base = a["affinity_off"]["prefill_tokens"] or 1
    lines.append(
        f"prefill tokens saved by affinity: {saved} ({100 * saved / base:.0f}% of "
        "the prefill without it)"
    )
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--speedup", type=float, default=20.0, help="multiply all host speeds")
    p.add_argument("--overhead-calls", type=int, help="calls per path (200; 60 with --engine)")
    p.add_argument("--concurrency", type=int, default=32, help="clients in the throughput part")
    p.add_argument("--jobs", type=int, default=60)
    p.add_argument("--conversations", type=int, default=6)
    p.add_argument("--turns", type=int, default=6)
    p.add_argument("--json", type=Path, help="also write the figures as JSON")
    p.add_argument("--overhead-only", action="store_true", help="only part 1 (overhead)")
    p.add_argument(
        "--engine",
        action="store_true",
        help="part 1 against llama.cpp's server on the built-in model, anchored on it",
    )
    a = p.parse_args()
    t_start = time.monotonic()
    load_before = os.getloadavg()
    speeds = {k: v * a.speedup for k, v in BASE_SPEEDS.items()}
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        res: dict = {"speeds": speeds}
        if a.engine:
            from tests.support.engine import ALIAS

            host_fn, model = engine_host, ALIAS
        else:
            host_fn, model = test_host, MODEL
        res["overhead"] = overhead(
            workdir,
            a.overhead_calls or (60 if a.engine else 200),
            test_host=host_fn,
            gateway=gateway,
            minimal_proxy=minimal_proxy,
            fleet_dict=lambda urls, wd, **kw: fleet_dict(urls, wd, model, **kw),
            model=model,
            concurrency=a.concurrency,
            # a real engine is ~100x slower than the look-alike: fewer calls a round
            calls=a.concurrency * 4 if a.engine else 400,
            rounds=6 if a.engine else 10,
        )
        if a.overhead_only or a.engine:
            res["load_average"] = load_before + os.getloadavg()
            print("\n".join(report_overhead(res, anchor="direct" if a.engine else "minimal")))
            if a.json:
                a.json.write_text(json.dumps(res, indent=2))
            return
        with contextlib.ExitStack() as stack:
            urls = {
                name: stack.enter_context(test_host(s, s * DECODE_RATIO, cache_entries=4))
                for name, s in speeds.items()
            }
            # fake hosts are fast: a long prompt and many tokens keep timing noise small
            bench = run_bench(
                parse_fleet(fleet_dict(urls, workdir)),
                max_tokens=400,
                repeats=int(8 * a.speedup),
                runs=2,
            )
            save_bench(workdir / "fleet-bench.json", bench)
            res["fleet_bench"] = {
                h: {k: r.get(k) for k in ("prefill_tps", "decode_tps")}
                for h, r in bench["hosts"].items()
            }
            res["makespan"] = makespans(workdir, urls, speeds, a.jobs)
            res["affinity"] = affinity(workdir, urls, a.conversations, a.turns)
    res["run_seconds"] = time.monotonic() - t_start
    print(report(res))
    print(f"\nfleet bench (tok/s): {res['fleet_bench']}")
    print(f"run time {res['run_seconds']:.1f} s")
    if a.json:
        a.json.write_text(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
