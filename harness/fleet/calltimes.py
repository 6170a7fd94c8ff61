"""Per-call engine telemetry: time to first token, prefill and decode rates and the
prompt-cache share of one model call, and the same summed over a trial's calls.

Each call's figures come from the engine's own ``timings`` when it sent them (llama.cpp's
server: ``prompt_ms``, ``prompt_per_second``, ``predicted_per_second``, ``cache_n``), else
from the gateway's clock (``ttft_s``, ``prefill_tps``, ``decode_tps``) and the usage's
``cached_tokens``. ``source`` says which. A trial's sums weigh every call by its tokens:
the decode rate is the tokens written over the time spent writing them, not a mean of
rates. The engine and quantisation of a run (the comparison axis of ``report`` and the
board) are read from the fleet fingerprint in run.json.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

ENGINE = "engine"
GATEWAY = "gateway"
TRIAL_KEYS = ("ttft_s", "prefill_tps", "decode_tps", "cache_share")


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def call_times(row: Mapping[str, Any]) -> dict[str, Any]:
    """One telemetry line's TTFT (s), prefill and decode rates (tokens/s), cache share
    (0..1 of the prompt's tokens) and their ``source``; a figure not known is None."""
    prompt = _num(row.get("prompt_tokens")) or 0.0
    timings = row.get("engine_timings")
    if isinstance(timings, dict) and _num(timings.get("predicted_per_second")) is not None:
        prompt_ms = _num(timings.get("prompt_ms"))
        cached = _num(timings.get("cache_n"))
        return {
            "ttft_s": None if prompt_ms is None else round(prompt_ms / 1000, 4),
            "prefill_tps": _round(_num(timings.get("prompt_per_second"))),
            "decode_tps": _round(_num(timings.get("predicted_per_second"))),
            "cache_share": _share(cached, prompt),
            "source": ENGINE,
        }
    return {
        "ttft_s": _num(row.get("ttft_s")),
        "prefill_tps": _round(_num(row.get("prefill_tps"))),
        "decode_tps": _round(_num(row.get("decode_tps"))),
        "cache_share": _share(_num(row.get("cached_tokens")), prompt),
        "source": GATEWAY,
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def _share(cached: float | None, prompt: float) -> float | None:
    if cached is None or prompt <= 0:
        return None
    return round(min(cached / prompt, 1.0), 4)


def trial_times(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Over a trial's answered calls: mean TTFT, prefill and decode rates weighted by
    tokens, the prompt-cache share of all prompt tokens, and how many calls were timed
    by the engine itself. Empty when no call was answered."""
    ttfts: list[float] = []
    prefill_tokens = prefill_s = decode_tokens = decode_s = 0.0
    cached = prompt = 0.0
    timed = from_engine = 0
    for row in rows:
        if row.get("status") != 200 or row.get("incomplete"):
            continue
        t = call_times(row)
        timed += 1
        from_engine += t["source"] == ENGINE
        if t["ttft_s"] is not None:
            ttfts.append(t["ttft_s"])
        p_tok = (_num(row.get("prompt_tokens")) or 0.0) - (
            (t["cache_share"] or 0.0) * (_num(row.get("prompt_tokens")) or 0.0)
        )
        if t["prefill_tps"] and p_tok > 0:
            prefill_tokens += p_tok
            prefill_s += p_tok / t["prefill_tps"]
        c_tok = _num(row.get("completion_tokens")) or 0.0
        if t["decode_tps"] and c_tok > 0:
            decode_tokens += c_tok
            decode_s += c_tok / t["decode_tps"]
        if t["cache_share"] is not None:
            cached += t["cache_share"] * (_num(row.get("prompt_tokens")) or 0.0)
            prompt += _num(row.get("prompt_tokens")) or 0.0
    if not timed:
        return {}
    return {
        "ttft_s": round(sum(ttfts) / len(ttfts), 4) if ttfts else None,
        "prefill_tps": round(prefill_tokens / prefill_s, 1) if prefill_s else None,
        "decode_tps": round(decode_tokens / decode_s, 1) if decode_s else None,
        "cache_share": round(cached / prompt, 4) if prompt else None,
        "timed_calls": timed,
        "engine_timed_calls": from_engine,
    }


def engine_axis(meta: Mapping[str, Any]) -> str:
    """A run's engine and quantisation from run.json's fleet fingerprint
    (``llama.cpp b11669-Debian Q4_1``); several hosts joined by ``|``; ``-`` if unknown."""
    fleet = meta.get("fleet")
    if not isinstance(fleet, dict):
        return "-"
    labels: set[str] = set()
    hosts = fleet.get("hosts") if isinstance(fleet.get("hosts"), dict) else {}
    for ident in (fleet.get("identifiers") or {}).values():
        if not isinstance(ident, dict):
            continue
        for name, host in (ident.get("hosts") or {}).items():
            if not isinstance(host, dict):
                continue
            api = (hosts.get(name) or {}).get("api") if isinstance(hosts, dict) else None
            parts = [
                str(api or ""),
                str(host.get("engine") or ""),
                str(host.get("quantization") or ""),
            ]
            label = " ".join(p for p in parts if p and p != "None")
            if label:
                labels.add(label)
    return " | ".join(sorted(labels)) or "-"


def describe(times: Mapping[str, Any]) -> str:
    """One line for a call's or a trial's figures: ``ttft 0.12 s · prefill 750 tok/s ·
    decode 190 tok/s · cache 80% (engine)``."""
    bits = []
    if times.get("ttft_s") is not None:
        bits.append(f"ttft {times['ttft_s']:.3g} s")
    if times.get("prefill_tps") is not None:
        bits.append(f"prefill {times['prefill_tps']:.3g} tok/s")
    if times.get("decode_tps") is not None:
        bits.append(f"decode {times['decode_tps']:.3g} tok/s")
    if times.get("cache_share") is not None:
        bits.append(f"cache {100 * times['cache_share']:.0f}%")
    if not bits:
        return "no timings"
    source = times.get("source")
    if source is None and "timed_calls" in times:
        source = f"{times['engine_timed_calls']}/{times['timed_calls']} calls timed by the engine"
    return " · ".join(bits) + (f" ({source})" if source else "")
