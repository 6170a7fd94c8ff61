"""apps/invoice-sync 4.x: the checks that judge the whole run, on hand-built evidence.

The status is sampled all run long and each sample judged at its moment; the backoff is
judged against the SPEC's factor and cap with the run's measured latency; a SIGKILL at a
file write is judged by what survived and what was asked again; the data folder holds
SQLite only; the fixtures repeat earlier invoices and carry a zero amount.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from harness.appkit.fetch import Fetched
from harness.appkit.mockdep import RESOURCE
from tests.support.suites import suite_names

SEED = "0123456789abcdef"

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def m() -> Any:
    return suite_names("invoice-sync")


def _ask(seq: int, page: int, status: int, at: float, phase: str) -> dict[str, Any]:
    return {
        "seq": seq,
        "t_ms": at * 1000.0,
        "phase": phase,
        "path": RESOURCE,
        "page": page,
        "status": status,
        "fault": None,
        "inflight": 0,
    }


def _evidence(m: Any, tmp_path: Path, **kw: Any) -> Any:
    ev = m.Evidence(dataset=m.dataset(SEED), evidence_dir=tmp_path)
    for key, value in kw.items():
        setattr(ev, key, value)
    return ev


def _run_with_status(m: Any, tmp_path: Path, words: list[tuple[str, str]]) -> Any:
    """A run whose last page is answered at 10 s; one sample per (phase, state) word,
    0.5 s apart, counts growing to the total at ``done``."""
    ev = _evidence(m, tmp_path)
    total, last = len(ev.dataset.invoices), len(ev.dataset.pages) - 1
    ev.trace = [_ask(1, last, 200, 10.0, "after-write-kill")]
    for i, (phase, state) in enumerate(words):
        at = 1000.0 * (0.5 * i if state != "done" else 10.5 + 0.5 * i)
        count = total if state == "done" else min(i, total)
        ev.samples.append(m.Sample(at, phase, 200, {"state": state, "count": count}))
    ev.status = {"state": "done", "count": total}
    ev.status_after_restart = {"state": "done", "count": total}
    return ev


def test_a_status_word_wrong_only_mid_sync_fails(m: Any, tmp_path: Path) -> None:
    right = [("initial-sync", "syncing"), ("after-respawn", "syncing"), ("offline", "done")]
    assert m.status_throughout(_run_with_status(m, tmp_path, right)).score == 1.0
    wrong = [("initial-sync", "syncing"), ("after-respawn", "running"), ("offline", "done")]
    out = m.status_throughout(_run_with_status(m, tmp_path, wrong))
    assert out.score == 0.0 and "running" in out.detail


def test_syncing_after_completion_or_done_too_early_fails(m: Any, tmp_path: Path) -> None:
    after = [("after-write-kill", "syncing"), ("after-write-kill", "done"), ("offline", "syncing")]
    assert m.status_throughout(_run_with_status(m, tmp_path, after)).score == 0.0
    ev = _run_with_status(m, tmp_path, [("initial-sync", "syncing"), ("offline", "done")])
    ev.samples.insert(0, m.Sample(100.0, "initial-sync", 200, {"state": "done", "count": 0}))
    assert m.status_throughout(ev).score == 0.0  # done before the last page was answered
    ev = _run_with_status(m, tmp_path, [("initial-sync", "syncing"), ("offline", "done")])
    ev.status_after_restart = {"state": "syncing", "count": len(ev.dataset.invoices)}
    assert m.status_throughout(ev).score == 0.0  # a finished sync restarted says syncing


def test_a_count_that_shrinks_across_a_kill_fails(m: Any, tmp_path: Path) -> None:
    ev = _run_with_status(m, tmp_path, [("offline", "done")])
    ev.samples[:0] = [
        m.Sample(100.0, "initial-sync", 200, {"state": "syncing", "count": 20}),
        m.Sample(900.0, "after-respawn", 200, {"state": "syncing", "count": 10}),
    ]
    out = m.status_throughout(ev)
    assert out.score == 0.0 and "cannot shrink" in out.detail


def test_backoff_each_limit_one_step_past_fails_and_exact_passes(m: Any) -> None:
    exact = [0.2 * 1.5**k for k in range(7)]
    assert m._growth_misses([p + 0.01 for p in exact], 0.25) == []
    measured = [0.206, 0.307, 0.453, 0.685, 1.059, 1.536, 2.283]  # the reference, load 15
    assert m._growth_misses(measured, m.LATENCY_FLOOR_S) == []
    capped = [0.2, 0.3, 0.45, 0.675, 1.0125, 1.51875, 2.278, 3.417, 5.0, 5.0]
    assert m._growth_misses(capped, 0.25) == []
    linear = [0.5, 1.0, 1.5, 2.0, 2.5, 3.0]  # 1.5x only in its third step
    assert m._growth_misses(linear, 0.25)
    cap_two = [0.2, 0.4, 0.8, 1.6, 2.0, 2.0]  # doubling, capped at 2 s
    assert m._growth_misses(cap_two, 0.25)
    nudged = [0.199] + [0.18 * 1.5**k + 0.02 for k in range(1, 7)]  # 0.18 s + latency
    assert m._growth_misses(nudged, m.LATENCY_FLOOR_S)
    x14 = [0.2 * 1.4**k for k in range(7)]
    assert m._growth_misses(x14, 0.25)


def test_the_latency_allowed_is_measured_on_the_run(m: Any, tmp_path: Path) -> None:
    ev = _evidence(m, tmp_path)
    ev.trace = [_ask(1, 0, 200, 1.0, "initial-sync"), _ask(2, 1, 200, 1.04, "initial-sync")]
    assert m._latency(ev) == m.LATENCY_FLOOR_S
    ev.samples = [m.Sample(500.0, "initial-sync", 200, {}, 0.17)]  # a slow status answer
    assert abs(m._latency(ev) - 0.17) < 1e-9
    ev.samples = []
    ev.trace = [_ask(1, 0, 200, 1.0, "initial-sync"), _ask(2, 1, 200, 3.0, "initial-sync")]
    assert m._latency(ev) == 0.25  # never wider than the kit's allowance


def _write_killed(m: Any, tmp_path: Path, kept: list[str], again: list[int]) -> Any:
    ev = _evidence(m, tmp_path, write_killed=True, write_kill_detail="killed at a write")
    ev.write_kill_page = 3
    body = [{"id": i} for i in kept]
    ev.survived_write_kill = Fetched("u", 200, __import__("json").dumps(body))
    ev.trace = [_ask(n + 1, p, 200, 1.0 + n, "after-write-kill") for n, p in enumerate(again)]
    return ev


def test_a_kill_between_two_writes_is_caught(m: Any, tmp_path: Path) -> None:
    pages = m.dataset(SEED).pages
    stored = [inv.id for page in pages[:3] for inv in page]
    right = _write_killed(m, tmp_path, stored, [3, 4])
    assert m.sync_write_kill(right).score == 1.0
    # the last page before 3 with rows of its own (4.2 draws empty pages): its cursor
    # stored, not its rows
    last = max(p for p in range(3) if {i.id for i in pages[p]} - {i.id for i in pages[p - 1]})
    lost = [inv.id for page in pages[:last] for inv in page]
    assert m.sync_write_kill(_write_killed(m, tmp_path, lost, [3, 4])).score == 0.0
    torn = stored + [inv.id for inv in pages[3]]  # page 3's rows, not its cursor
    out = m.sync_write_kill(_write_killed(m, tmp_path, torn, [3, 4]))
    assert out.score == 0.0 and "asked again [3]" in out.detail


def test_a_restart_mid_sync_that_serves_nothing_with_the_upstream_down_fails(
    m: Any, tmp_path: Path
) -> None:
    """M-DUR-2 on every restart with the upstream down, not only the last: an app that
    holds its store while it waits on the upstream serves nothing after the write kill."""
    pages = m.dataset(SEED).pages
    stored = [inv.id for page in pages[:3] for inv in page]
    every = [{"id": inv.id} for inv in m.dataset(SEED).invoices]
    ev = _write_killed(m, tmp_path, stored, [3, 4])
    ev.listing = ev.restored = Fetched("u", 200, __import__("json").dumps(every))
    assert m.durability_after_kill(ev).score == 1.0
    ev.survived_write_kill = Fetched("u", None, "", error="timed out")
    out = m.durability_after_kill(ev)
    assert out.score == 0.0 and "timed out" in out.detail
    assert m.sync_write_kill(ev).score == 0.0 and "timed out" in m.sync_write_kill(ev).detail


def test_state_beside_the_database_fails_storage(m: Any, tmp_path: Path) -> None:
    db = ["invoicesync/invoices.db"]
    files = [*db, "invoicesync/invoices.db-wal", "invoicesync/invoices.db-shm"]
    assert m.storage_sqlite(_evidence(m, tmp_path, sqlite_files=db, data_files=files)).score == 1
    beside = [*files, "invoicesync/sync.json"]
    out = m.storage_sqlite(_evidence(m, tmp_path, sqlite_files=db, data_files=beside))
    assert out.score == 0.0 and "sync.json" in out.detail


def test_overlaps_repeat_earlier_invoices_and_each_exponent_has_a_zero(m: Any) -> None:
    for seed in (SEED, "a11ce5eedf00d123", "fc2ea274a1eb72ee"):
        data = m.dataset(seed)
        served = [inv.id for page in data.pages for inv in page]
        assert sorted(set(served)) == sorted(inv.id for inv in data.invoices)
        # the kit's 3 overlaps, each moved to a drawn position, and 4.2's page of repeats
        assert len(served) >= len(data.invoices) + 3
        zeros = [inv for inv in data.invoices if inv.amount_minor == 0]
        assert sorted(m.EXPONENTS[inv.currency] for inv in zeros) == [0, 2, 3]  # w36
        firsts = list(dict.fromkeys(served))
        assert firsts == [inv.id for inv in data.invoices]  # first-received order holds


def _gave_up(seq: int, at: float, phase: str) -> dict[str, Any]:
    return {"seq": seq, "t_ms": at * 1000.0, "phase": phase, "mark": "gave-up"}


def test_a_slow_page_given_up_before_6_s_fails_and_after_6_s_passes(m: Any, tmp_path: Path) -> None:
    data = m.dataset(SEED)
    page = data.faults.slow_page
    life = "after-write-kill"
    slow = _ask(1, page, 200, 1.0, life) | {"fault": "slow"}
    waited = [slow, _ask(2, page + 1, 200, 1.0 + 7.2, life)]
    assert m.sync_waits_slow(_evidence(m, tmp_path, trace=waited)).score == 1.0
    # a 6.0 s timeout (the SPEC's bound), then one request again: right
    timed_out = [slow, _gave_up(2, 7.0, life), _ask(3, page, 200, 7.2, life)]
    timed_out.append(_ask(4, page + 1, 200, 7.3, life))
    assert m.sync_waits_slow(_evidence(m, tmp_path, trace=timed_out)).score == 1.0
    # a 5.8 s timeout: the connection closed at 5.8 s, asked again after a long pause
    early = [slow, _gave_up(2, 6.8, life), _ask(3, page, 200, 8.0, life)]
    early.append(_ask(4, page + 1, 200, 8.1, life))
    out = m.sync_waits_slow(_evidence(m, tmp_path, trace=early))
    assert out.score == 0.0 and "gave up after 5.800 s" in out.detail
    # asked again at 5.8 s with the first still open (no gave-up line)
    again = [slow, _ask(2, page, 200, 6.8, life), _ask(3, page + 1, 200, 6.9, life)]
    assert m.sync_waits_slow(_evidence(m, tmp_path, trace=again)).score == 0.0


def test_every_plain_page_after_the_kill_answers_one_503_first(m: Any, tmp_path: Path) -> None:
    mock = m.Upstream(SEED, tmp_path / "trace.jsonl")
    faults = mock.dataset.faults
    blips = m.blip_pages(mock.dataset)
    assert blips  # this seed: the pages after the kill page that carry no other fault
    assert not {faults.kill_page, faults.backoff_page, faults.retry_after_page} & set(blips)
    assert all(p > faults.kill_page for p in blips) and faults.slow_page not in blips
    for page in blips:
        cursor = mock.dataset.cursors[page]
        path = RESOURCE + ("" if cursor is None else f"?cursor={quote(cursor, safe='')}")
        assert mock.decide("GET", mock.base_path + path)[0] == 503  # once, no Retry-After
        assert mock.decide("GET", mock.base_path + path)[0] == 200


def test_a_short_first_pause_seen_only_on_a_blip_fails(m: Any, tmp_path: Path) -> None:
    ds = m.dataset(SEED)
    backoff, blips = ds.faults.backoff_page, m.blip_pages(ds)
    trace: list[dict[str, Any]] = []

    def ask(page: int, status: int, at: float) -> None:
        trace.append(_ask(len(trace) + 1, page, status, at, "after-write-kill"))

    def run(blip_pause: float) -> Any:
        trace.clear()
        at = 1.0
        for page in sorted({backoff, *blips}):
            if page == backoff:  # the run's first pause carries 0.03 s of latency
                for pause in (0.23, 0.3, 0.45, 0.675, 1.0125, 1.52):
                    ask(page, 503, at)
                    at += pause
            else:
                ask(page, 503, at)
                at += blip_pause
            ask(page, 200, at)
            at += 0.05
        return _evidence(m, tmp_path, trace=list(trace))

    right = m.sync_backoff_first(run(0.2))
    assert right.score == 1.0, right.detail
    short = m.sync_backoff_first(run(0.182))  # a 0.18 s pause on a retry with 2 ms latency
    assert short.score == 0.0 and f"page {blips[0]} 0.182 s" in short.detail


def test_a_restart_that_fails_before_the_page_is_the_apps_fault(m: Any, tmp_path: Path) -> None:
    """An app that dies at its restart (``os.makedirs`` without ``exist_ok``) stops the run
    before the browser looks: its UI and money checks fail (absent), they are not
    unmeasurable (which makes the scoring an error, charged to nobody)."""
    ui = (m.money_exact, m.ui_rows_visible, m.ui_table_rows, m.ui_escaped, m.ui_console_clean)
    died = _evidence(m, tmp_path, respawn_error="the app exited (code 1) before /health")
    for check in ui:
        got = check(died)
        assert got.score == 0.0 and got.status.value != "unavailable", (check, got)
        assert "restart failed" in got.detail
    infra = _evidence(m, tmp_path, probe_error="chromium did not start")
    assert all(check(infra).status.value == "unavailable" for check in ui)
