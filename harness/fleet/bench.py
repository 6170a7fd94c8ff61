"""``harness fleet bench``: measure each host's prefill and decode tokens/second.

One fixed prompt (a nonce in front so no prefix cache helps), streamed with usage; the
prefill rate is uncached prompt tokens over time to first token, the decode rate is the
remaining tokens over the rest. The results are stored as JSON and seed the router.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

from harness.fleet import wire
from harness.fleet.config import FleetConfig, Host
from harness.fleet.telemetry import rates

PARAGRAPH = (
    "The harness measures coding agents paired with language models. Each trial runs in a "
    "fresh container, talks to the gateway with its own key, and is scored by executing "
    "what it built. Tokens, timings and cost come from the gateway's record of every call. "
)
# 24 repeats: about 1,100 prompt tokens; raise it for hosts so fast that it takes no time


def bench_request(model: str, max_tokens: int, repeats: int = 24) -> dict[str, Any]:
    return {
        "model": model,
        "messages": [
            {"role": "system", "content": f"bench {uuid.uuid4().hex}"},
            {
                "role": "user",
                "content": PARAGRAPH * repeats + "\nSummarise the text above at length.",
            },
        ],
        "max_tokens": max_tokens,
        "temperature": 0,
        "stream": True,
        "stream_options": {"include_usage": True},
    }


async def bench_host(
    host: Host, model: str, client: httpx.AsyncClient, max_tokens: int = 64, repeats: int = 24
) -> dict[str, Any]:
    """One measured call on one host (raises httpx errors for the caller to report). A
    pooled connection the host had closed unannounced (llama.cpp's server, after a stream)
    is the client's artefact: the call is made again, timed anew."""
    for attempt in range(3):
        try:
            return await _bench_call(host, model, client, max_tokens, repeats)
        except httpx.RemoteProtocolError:
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


async def _bench_call(
    host: Host, model: str, client: httpx.AsyncClient, max_tokens: int, repeats: int
) -> dict[str, Any]:
    t0 = time.monotonic()
    ttft = None
    usage = None
    decoder = wire.SSEDecoder()
    async with client.stream(
        "POST",
        host.base_url + "/v1/chat/completions",
        json=bench_request(model, max_tokens, repeats),
        headers=host.headers(),
    ) as resp:
        if resp.status_code != 200:
            await resp.aread()
            raise httpx.HTTPStatusError(
                f"HTTP {resp.status_code}: {resp.text[:200]}", request=resp.request, response=resp
            )
        async for line in resp.aiter_lines():
            ev = decoder.feed(line)
            if ev is None or ev[1].strip() == "[DONE]":
                continue
            chunk = json.loads(ev[1])
            if ttft is None and wire.has_output(chunk):
                ttft = time.monotonic() - t0
            usage = chunk.get("usage") or usage
    total = time.monotonic() - t0
    prompt, cached, completion = wire.usage_numbers(usage)
    prefill, decode = rates(prompt, cached, completion, ttft, total)
    return {
        "model": model,
        "prompt_tokens": prompt,
        "cached_tokens": cached,
        "completion_tokens": completion,
        "ttft_s": round(ttft or 0, 4),
        "total_s": round(total, 4),
        "prefill_tps": round(prefill, 1) if prefill else None,
        "decode_tps": round(decode, 1) if decode else None,
    }


def _host_models(cfg: FleetConfig) -> dict[str, str]:
    names = [h.name for h in cfg.hosts]
    out: dict[str, str] = {}
    for mm in cfg.models.values():
        for h in mm.host_names(names):
            out.setdefault(h, mm.upstream_for(h))
    return out


async def run_bench_async(
    cfg: FleetConfig,
    *,
    max_tokens: int = 64,
    runs: int = 1,
    repeats: int = 24,
    timeout: float = 300.0,
) -> dict[str, Any]:
    models = _host_models(cfg)
    results: dict[str, Any] = {}
    async with httpx.AsyncClient(timeout=timeout) as client:

        async def one(host: Host) -> None:
            model = models.get(host.name)
            if model is None:
                results[host.name] = {"error": "no model in fleet.yml maps to this host"}
                return
            samples, errors = [], []
            for _ in range(runs):  # sequential on a host: measure it unloaded
                try:
                    samples.append(await bench_host(host, model, client, max_tokens, repeats))
                except (httpx.HTTPError, ValueError) as exc:
                    errors.append(f"{type(exc).__name__}: {exc}")
            if not samples:
                results[host.name] = {
                    "model": model,
                    "error": "; ".join(errors),
                    "runs": 0,
                    "failed_runs": len(errors),
                }
                return
            best = dict(samples[-1])
            for key in ("prefill_tps", "decode_tps"):
                vals = sorted(s[key] for s in samples if s.get(key))
                best[key] = vals[len(vals) // 2] if vals else None
            best["runs"] = len(samples)
            best["failed_runs"] = len(errors)
            if errors:  # shown, not hidden behind the runs that worked
                best["error"] = "; ".join(errors)
            results[host.name] = best

        await asyncio.gather(*(one(h) for h in cfg.hosts))
    return {"measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "hosts": results}


def run_bench(cfg: FleetConfig, **kw: Any) -> dict[str, Any]:
    return asyncio.run(run_bench_async(cfg, **kw))


def save_bench(path: str | Path, data: dict[str, Any]) -> Path:
    """Write atomically; hosts that failed this time keep their previous figures."""
    p = Path(path)
    old = load_bench(p)
    merged = dict(old)
    for name, res in data.get("hosts", {}).items():
        if res.get("prefill_tps") or name not in merged:
            merged[name] = res
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_suffix(p.suffix + ".tmp")
    tmp.write_text(json.dumps({**data, "hosts": merged}, indent=2) + "\n", encoding="utf-8")
    tmp.replace(p)
    return p


def load_bench(path: str | Path) -> dict[str, dict[str, Any]]:
    """{host: {prefill_tps, decode_tps, ...}} from a bench file; {} when there is none."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    hosts = data.get("hosts") if isinstance(data, dict) else None
    return hosts if isinstance(hosts, dict) else {}
