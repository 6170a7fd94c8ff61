"""``fleet bench``'s files and request: a host that failed this time keeps its previous
figures, a missing or broken file reads as none, and every request defeats prompt caches."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.fleet.bench import bench_request, load_bench, save_bench

pytestmark = pytest.mark.unit


def test_a_failed_host_keeps_its_previous_figures(tmp_path: Path) -> None:
    path = tmp_path / ".harness" / "fleet-bench.json"
    save_bench(
        path,
        {"measured_at": "1", "hosts": {"a": {"prefill_tps": 900.0}, "b": {"prefill_tps": 50.0}}},
    )
    later = {
        "a": {"prefill_tps": None, "failed_runs": 3},
        "b": {"prefill_tps": 60.0},
        "c": {"failed_runs": 1},
    }
    save_bench(path, {"measured_at": "2", "hosts": later})
    assert load_bench(path) == {
        "a": {"prefill_tps": 900.0},  # failed now: the last measure stands
        "b": {"prefill_tps": 60.0},
        "c": {"failed_runs": 1},  # never measured: its failure is all there is
    }
    assert json.loads(path.read_text())["measured_at"] == "2"
    assert not list(path.parent.glob("*.tmp"))


def test_no_file_or_a_broken_one_reads_as_no_figures(tmp_path: Path) -> None:
    assert load_bench(tmp_path / "none.json") == {}
    for text in ("{torn", "[]", '{"hosts": []}'):
        (tmp_path / "b.json").write_text(text)
        assert load_bench(tmp_path / "b.json") == {}, text


def test_each_request_streams_with_usage_behind_a_fresh_prefix() -> None:
    one, two = bench_request("m", 64, repeats=2), bench_request("m", 64, repeats=2)
    assert one["messages"][0] != two["messages"][0]  # no prompt cache can serve it
    assert one["stream"] is True and one["stream_options"] == {"include_usage": True}
    assert one["max_tokens"] == 64 and one["temperature"] == 0
    longer = bench_request("m", 64, repeats=4)["messages"][1]["content"]
    assert len(longer) > len(one["messages"][1]["content"])
