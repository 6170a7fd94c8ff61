"""Telemetry arithmetic: token cost, energy shared among concurrent calls, per-trial sums."""

import json

import pytest

from harness.fleet.config import Price
from harness.fleet.telemetry import (
    EnergyMeter,
    TelemetrySink,
    energy_kwh,
    rates,
    summarize,
    token_cost,
    trial_usage_from_file,
    union_seconds,
)

pytestmark = pytest.mark.unit


def test_token_cost_prices_cached_input_apart():
    p = Price(input=3.0, cached_input=0.3, output=15.0)
    # 1M prompt of which 400k cached, 100k completion
    assert token_cost(p, 1_000_000, 400_000, 100_000) == pytest.approx(1.8 + 0.12 + 1.5)
    assert token_cost(Price(input=2, output=4), 1000, 1000, 0) == pytest.approx(0.002)
    assert token_cost(None, 10, 0, 10) == 0.0


def test_energy_kwh():
    assert energy_kwh(3600, 1000) == pytest.approx(1.0)
    assert energy_kwh(10, None) == 0.0


def test_energy_meter_shares_busy_time():
    m = EnergyMeter()
    m.start("a", 0.0)
    m.start("b", 2.0)  # a alone for 2 s, then both for 2 s
    assert m.stop("a", 4.0) == pytest.approx(2 + 1)
    assert m.stop("b", 6.0) == pytest.approx(1 + 2)
    # the charges add up to the busy time (6 s), never to the summed durations (8 s)
    m.start("c", 10.0)
    assert m.stop("c", 11.0) == pytest.approx(1.0)


def test_rates_need_enough_tokens():
    assert rates(1000, 200, 11, 0.5, 1.5) == (pytest.approx(1600), pytest.approx(10))
    assert rates(10, 0, 1, 0.5, 1.0) == (None, None)


def test_union_seconds():
    assert union_seconds([(0, 2), (1, 3), (5, 6)]) == pytest.approx(4)
    assert union_seconds([]) == 0


def line(**kw):
    base = {
        "ts": 0.0,
        "call": "c1",
        "trial": "t1",
        "host": "a",
        "status": 200,
        "incomplete": False,
        "prompt_tokens": 0,
        "cached_tokens": 0,
        "completion_tokens": 0,
        "total_s": 1.0,
        "busy_s": 1.0,
        "cost_usd": 0.0,
        "token_cost_usd": 0.0,
        "energy_cost_usd": 0.0,
        "energy_kwh": 0.0,
    }
    base.update(kw)
    return base


def test_summarize_counts_calls_attempts_and_wall_time():
    rows = [
        line(call="c1", status=500, total_s=0.1, ts=0.0),
        line(
            call="c1",
            host="b",
            prompt_tokens=100,
            cached_tokens=40,
            completion_tokens=10,
            ts=0.1,
            total_s=2.0,
            cost_usd=0.5,
            energy_kwh=0.001,
        ),
        line(call="c2", ts=1.0, total_s=2.0, incomplete=True, completion_tokens=3),
        line(call="c3", trial="other", prompt_tokens=999),
    ]
    s = summarize(rows, "t1")
    assert s["calls"] == 2 and s["attempts"] == 3 and s["failed_attempts"] == 2
    assert s["incomplete"] == 1
    assert (s["prompt_tokens"], s["cached_tokens"], s["completion_tokens"]) == (100, 40, 13)
    assert s["wall_seconds"] == pytest.approx(3.0)  # 0..3, overlapping calls counted once
    assert s["model_seconds"] == pytest.approx(4.1)
    assert s["cost_usd"] == pytest.approx(0.5) and s["energy_kwh"] == pytest.approx(0.001)
    assert s["hosts"] == {"a": 2, "b": 1}
    assert summarize(rows)["calls"] == 3


def test_sink_writes_jsonl_and_summarises(tmp_path):
    path = tmp_path / "t" / "telemetry.jsonl"
    sink = TelemetrySink(path)
    sink.write(line(prompt_tokens=5))
    sink.write(line(call="c2", trial="t2"))
    sink.close()
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    assert list(rows[0])[:3] == ["ts", "call", "trial"]
    assert trial_usage_from_file(path, "t1")["prompt_tokens"] == 5
    assert sink.trial_usage("t2")["calls"] == 1


def test_sink_streams_to_its_file_and_reads_back_only_its_own_lines(tmp_path):
    """A file sink keeps no lines in memory; what it reads back is what it wrote this
    time (not an older gateway's lines in the same file), whole lines only."""
    path = tmp_path / "telemetry.jsonl"
    path.write_text(json.dumps(line(call="old", trial="t1")) + "\n")
    sink = TelemetrySink(path)
    for i in range(500):
        sink.write(line(call=f"c{i}", trial=f"t{i % 2}", prompt_tokens=1))
    assert sink._records == []  # memory stays bounded: lines go to the file only
    assert [r["call"] for r in sink.records("t1")] == [f"c{i}" for i in range(1, 500, 2)]
    assert sink.trial_usage("t1")["prompt_tokens"] == 250
    with path.open("a") as fh:  # someone else's half-written line after ours: not read
        fh.write('{"call": "torn"')
    assert len(sink.records()) == 500
    sink.close()
    assert sink.trial_usage("t0")["calls"] == 250
