"""Time to first token of a non-streamed reply, as the host reports it.

A non-streamed call is sent to its host non-streamed (the cheapest path), so the gateway
sees one moment only: the whole reply. The time to first token (and with it the prefill
and decode rates the router learns from) is then only known if the host says it in the
body. Two engines do: llama.cpp's server (``timings.prompt_ms``, the prompt's evaluation
in milliseconds) and LM Studio's REST API (``stats.time_to_first_token``, seconds). Any
other host gives ``None``: telemetry then has no ``ttft_s`` for the call and the router
learns nothing from it (its total time and usage are still recorded).
"""

from __future__ import annotations

from typing import Any

# llama.cpp's per-call ``timings`` fields kept in the gateway's telemetry line
ENGINE_TIMINGS = (
    "prompt_ms",
    "predicted_ms",
    "predicted_per_second",
    "prompt_per_second",
    "cache_n",
    "prompt_n",  # the prompt's tokens the engine evaluated (cache_n more were reused)
    "predicted_n",  # the tokens it generated: its own count, beside ``usage``
)


def reported_ttft_s(body: dict[str, Any]) -> float | None:
    """Seconds to the first token that the host reports in a reply body, or None."""
    timings = body.get("timings")
    if isinstance(timings, dict):
        ms = timings.get("prompt_ms")
        if isinstance(ms, int | float) and not isinstance(ms, bool) and ms >= 0:
            return float(ms) / 1000.0
    stats = body.get("stats")
    if isinstance(stats, dict):
        s = stats.get("time_to_first_token")
        if isinstance(s, int | float) and not isinstance(s, bool) and s >= 0:
            return float(s)
    return None


def engine_timings(body: dict[str, Any]) -> dict[str, float] | None:
    """The engine's own ``timings`` of a reply or a stream's last chunk (llama.cpp's
    server), reduced to the fields telemetry keeps; None when the body has none."""
    timings = body.get("timings")
    if not isinstance(timings, dict):
        return None
    kept = {
        k: float(v)
        for k in ENGINE_TIMINGS
        if isinstance(v := timings.get(k), int | float) and not isinstance(v, bool)
    }
    return kept or None
