"""The seeded mock upstream: its faults, its timed trace, and replays."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from harness.appkit.fixtures import BACKOFF_FAILURES, RETRY_AFTER
from harness.appkit.mockdep import MockUpstream

pytestmark = pytest.mark.integration

SEED = "a11ce5eedf00d123"


def _get(mock: MockUpstream, cursor: str | None) -> tuple[int, Any, dict[str, str]]:
    query = "" if cursor is None else f"?cursor={cursor}"
    try:
        with urllib.request.urlopen(f"{mock.url}/v1/invoices{query}", timeout=10) as resp:
            return resp.status, json.loads(resp.read()), dict(resp.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, None, dict(exc.headers)


def _client(mock: MockUpstream) -> list[str]:
    """A simple in-order client: retries every 503 at once, releases the held page."""
    seen: list[str] = []
    cursor: str | None = None
    while True:
        if mock.dataset.page_of(cursor) == mock.dataset.faults.kill_page:
            out: list[Any] = []
            worker = threading.Thread(target=lambda c=cursor, o=out: o.append(_get(mock, c)))
            worker.start()
            assert mock.kill_point.wait(10)
            mock.release()
            worker.join()
            status, body, _ = out[0]
        else:
            status, body, _ = _get(mock, cursor)
        if status == 503:
            continue
        assert status == 200
        seen += [item["id"] for item in body["data"]]
        cursor = body["next_cursor"]
        if cursor is None:
            return seen


def test_a_simple_client_meets_every_fault_and_the_trace_times_it(tmp_path: Path) -> None:
    with MockUpstream(SEED, tmp_path / "trace.jsonl", slow_delay=0.3) as mock:
        data, f = mock.dataset, mock.dataset.faults
        seen = _client(mock)
        assert _get(mock, "c-not-a-cursor")[0] == 400
        mock.mark_phase("offline")
        mock.set_offline(True)
        assert _get(mock, None)[0] == 503
        records = mock.records()
    assert len(seen) == len(data.invoices) + 3  # three invoices are on two pages
    assert set(seen) == {inv.id for inv in data.invoices}
    assert [r["seq"] for r in records] == list(range(1, len(records) + 1))
    times = [r["t_ms"] for r in records]
    assert times == sorted(times)
    reqs = [r for r in records if "method" in r]
    by = lambda page, fault: [r for r in reqs if r["page"] == page and r["fault"] == fault]  # noqa: E731
    assert len(by(f.backoff_page, "unavailable")) == BACKOFF_FAILURES
    assert len(by(f.retry_after_page, "retry-after")) == 1
    assert len(by(f.kill_page, "hold")) == 1 and len(by(f.slow_page, "slow")) == 1
    slow = by(f.slow_page, "slow")[0]
    after = next(r for r in reqs if r["seq"] > slow["seq"])
    assert after["t_ms"] - slow["t_ms"] >= 300  # the answer really was held
    assert all(r["inflight"] == 0 for r in reqs)
    assert {"mark": "phase", "phase": "offline"}.items() <= records[-2].items()


def test_retry_after_is_sent_and_the_same_client_replays_the_same_requests(tmp_path: Path) -> None:
    shapes = []
    for run in ("one", "two"):
        with MockUpstream(SEED, tmp_path / f"{run}.jsonl", slow_delay=0.1) as mock:
            page = mock.dataset.faults.retry_after_page
            status, _, headers = _get(mock, mock.dataset.cursors[page])
            assert status == 503 and headers.get("Retry-After") == str(RETRY_AFTER)
            _client(mock)
            shapes.append([(r["page"], r["status"], r["fault"]) for r in mock.records()])
    assert shapes[0] == shapes[1]
    with MockUpstream("00000000c0ffee00", tmp_path / "other.jsonl", slow_delay=0.1) as mock:
        _client(mock)
        other = [(r["page"], r["status"], r["fault"]) for r in mock.records()]
    assert other != shapes[0]
