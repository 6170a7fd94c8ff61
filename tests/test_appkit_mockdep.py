"""The seeded mock upstream: its faults, its trace, and byte-identical replays."""

from __future__ import annotations

import importlib.util
import json
import threading
from pathlib import Path
from types import ModuleType

import pytest

from harness.scoring.appkit.fetch import get
from harness.scoring.appkit.mockdep import MockUpstream

pytestmark = pytest.mark.integration

SEED = "a11ce5eedf00d123"
SCENARIO = Path(__file__).resolve().parents[1] / "scenarios" / "apps" / "invoice-sync"


def _suite_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "invoice_sync_suite_mock", SCENARIO / "suite" / "suite.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _page(mock: MockUpstream, cursor: str | None) -> tuple[int | None, dict]:
    query = "" if cursor is None else f"?cursor={cursor}"
    got = get(f"{mock.url}/v1/invoices{query}")
    return got.status, got.json()


def test_a_simple_client_sees_every_fault_and_the_trace_records_it(tmp_path: Path) -> None:
    with MockUpstream(SEED, tmp_path / "trace.jsonl", slow_hold=30.0) as mock:
        data = mock.dataset
        slow, bad = data.faults.slow_page, data.faults.unavailable_page
        seen: list[str] = []
        cursor: str | None = None
        page = 0
        while True:
            if page == slow:  # held until released, like a very slow upstream
                result: list[tuple[int | None, dict]] = []
                worker = threading.Thread(
                    target=lambda c=cursor, out=result: out.append(_page(mock, c))
                )
                worker.start()
                assert mock.slow_started.wait(10)
                mock.release_slow()
                worker.join()
                status, body = result[0]
            else:
                status, body = _page(mock, cursor)
            if page == bad and status == 503:
                status, body = _page(mock, cursor)  # 503 once, then the page
            assert status == 200
            seen += [item["id"] for item in body["data"]]
            cursor, page = body["next_cursor"], page + 1
            if cursor is None:
                break
        assert _page(mock, "c-not-a-cursor")[0] == 400
        mock.mark_phase("offline")
        mock.set_offline(True)
        assert _page(mock, None)[0] == 503
        records = mock.records()

    assert len(seen) == len(data.invoices) + 1  # one invoice is on two pages
    assert set(seen) == {inv.id for inv in data.invoices}
    assert [r["seq"] for r in records] == list(range(1, len(records) + 1))
    faults = [(r.get("page"), r.get("fault"), r.get("status")) for r in records]
    assert (bad, "unavailable", 503) in faults and (slow, "slow", 200) in faults
    assert (None, "bad-cursor", 400) in faults and (0, "offline", 503) in faults
    assert {"mark": "phase", "phase": "offline", "seq": len(records) - 1} in records
    assert all(set(r) >= {"phase", "status", "cursor"} for r in records if "method" in r)
    assert "time" not in json.dumps(records)


def test_reference_solution_gives_a_byte_identical_trace_twice(tmp_path: Path) -> None:
    module = _suite_module()
    traces = []
    for run in ("one", "two"):
        with module.context(SCENARIO / "solution", SEED, tmp_path / run, browser=False) as ev:
            assert ev.healthy and ev.killed_mid_sync and ev.sync_state == "done"
        traces.append((tmp_path / run / "trace.jsonl").read_bytes())
    assert traces[0] == traces[1]
    phases = [json.loads(line).get("phase") for line in traces[0].splitlines()]
    assert {"initial-sync", "after-respawn", "offline"} <= set(phases)


def test_another_seed_gives_another_trace(tmp_path: Path) -> None:
    module = _suite_module()
    with module.context(
        SCENARIO / "solution", "00000000c0ffee00", tmp_path / "other", browser=False
    ) as ev:
        assert ev.sync_state == "done"
        assert len(set(ev.ids(ev.listing))) == len(ev.dataset.invoices)
    with module.context(SCENARIO / "solution", SEED, tmp_path / "ours", browser=False):
        pass
    assert (tmp_path / "other" / "trace.jsonl").read_bytes() != (
        tmp_path / "ours" / "trace.jsonl"
    ).read_bytes()
