"""Per-call engine telemetry: TTFT, prefill/decode rates and prompt-cache share from the
engine's own timings where sent, the gateway's clock otherwise; a trial's sums weighted
by tokens; the engine and quantisation read from the fleet fingerprint."""

from __future__ import annotations

import pytest

from harness.fleet.calltimes import call_times, describe, engine_axis, trial_times
from harness.fleet.telemetry import summarize

pytestmark = pytest.mark.unit

ENGINE_ROW = {
    "call": "a",
    "status": 200,
    "prompt_tokens": 1000,
    "cached_tokens": 0,
    "completion_tokens": 100,
    "ttft_s": 9.0,  # the gateway's clock (network and queue included)
    "prefill_tps": 1.0,
    "decode_tps": 1.0,
    "engine_timings": {
        "prompt_ms": 250.0,
        "prompt_per_second": 800.0,
        "predicted_per_second": 100.0,
        "cache_n": 800.0,
        "prompt_n": 200.0,
        "predicted_n": 100.0,
    },
}
GATEWAY_ROW = {
    "call": "b",
    "status": 200,
    "prompt_tokens": 400,
    "cached_tokens": 100,
    "completion_tokens": 300,
    "ttft_s": 0.5,
    "prefill_tps": 600.0,
    "decode_tps": 300.0,
}


def test_a_call_is_timed_by_the_engine_where_it_sent_timings() -> None:
    t = call_times(ENGINE_ROW)
    assert t == {
        "ttft_s": 0.25,
        "prefill_tps": 800.0,
        "decode_tps": 100.0,
        "cache_share": 0.8,
        "source": "engine",
    }
    g = call_times(GATEWAY_ROW)
    assert g["source"] == "gateway" and g["ttft_s"] == 0.5 and g["decode_tps"] == 300.0
    assert g["cache_share"] == 0.25
    assert call_times({"status": 200})["cache_share"] is None  # unknown is not zero
    assert describe(t) == "ttft 0.25 s · prefill 800 tok/s · decode 100 tok/s · cache 80% (engine)"


def test_a_trials_rates_weigh_each_call_by_its_tokens() -> None:
    failed = {**GATEWAY_ROW, "call": "c", "status": 502, "ttft_s": 99.0}
    s = trial_times([ENGINE_ROW, GATEWAY_ROW, failed])
    # 400 tokens written in 100/100 + 300/300 = 2 s: 200 tok/s, not the rates' mean
    assert s["decode_tps"] == 200.0 and s["ttft_s"] == 0.375  # the failed call left out
    assert s["cache_share"] == round(900 / 1400, 4)
    assert s["timed_calls"] == 2 and s["engine_timed_calls"] == 1
    assert trial_times([failed]) == {}
    usage = summarize([ENGINE_ROW, GATEWAY_ROW])  # a trial's usage carries the sums
    assert usage["decode_tps"] == 200.0 and usage["ttft_s"] == 0.375
    assert "ttft_s" not in summarize([])


def test_the_engine_axis_is_read_from_the_fleet_fingerprint() -> None:
    meta = {
        "fleet": {
            "identifiers": {
                "smollm2-135m": {
                    "hosts": {"local-engine": {"engine": "b11669-Debian", "quantization": "Q4_1"}}
                }
            },
            "hosts": {"local-engine": {"api": "llama.cpp"}},
        }
    }
    assert engine_axis(meta) == "llama.cpp b11669-Debian Q4_1"
    assert engine_axis({}) == "-" and engine_axis({"fleet": {"identifiers": {}}}) == "-"
