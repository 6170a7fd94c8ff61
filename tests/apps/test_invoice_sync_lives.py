"""apps/invoice-sync 3.1: the time-aware checks grade one life of the app at a time.

When the app's /health waits on the upstream, the held kill page can be let go before
the suite kills the app; the app then reaches fault pages before the SIGKILL and asks
them again after the restart. A gap that spans the kill is no pause of the app's, a
re-ask after the restart is no early re-request, and the restart may continue from the
last page asked. These tests build the trace by hand and read the checks' verdicts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.appkit.fixtures import BACKOFF_FAILURES, RETRY_AFTER, build_dataset
from harness.appkit.mockdep import RESOURCE
from tests.support.suites import suite_names

SUITE = Path(__file__).resolve().parents[2] / "scenarios" / "apps" / "invoice-sync" / "suite"
SEED = "0123456789abcdef"


@pytest.fixture(scope="module")
def m() -> Any:
    return suite_names("invoice-sync")


class Trace:
    """A hand-written upstream trace: ``ask(page, status, at_s, phase)``."""

    def __init__(self, *asks: tuple[Any, ...]) -> None:
        self.records: list[dict[str, Any]] = []
        for one in asks:
            self.ask(*one)

    def ask(self, page: int, status: int, at: float, phase: str, fault: str | None = None) -> None:
        self.records.append(
            {
                "seq": len(self.records) + 1,
                "t_ms": at * 1000.0,
                "phase": phase,
                "path": RESOURCE,
                "page": page,
                "status": status,
                "fault": fault,
                "inflight": 0,
            }
        )


def _evidence(m: Any, tmp_path: Path, trace: Trace, **kw: Any) -> Any:
    ev = m.Evidence(dataset=build_dataset(SEED), evidence_dir=tmp_path)
    ev.trace = trace.records
    ev.killed_mid_sync = True
    for key, value in kw.items():
        setattr(ev, key, value)
    return ev


def test_a_retry_after_whose_retry_the_kill_cut_is_not_charged(m: Any, tmp_path: Path) -> None:
    page = build_dataset(SEED).faults.backoff_page  # 4.1: Retry-After inside its run
    t = Trace()
    t.ask(page, 503, 1.0, "initial-sync", "retry-after")
    t.records[-1]["retry_after"] = RETRY_AFTER
    t.ask(page, 200, 1.3, "after-respawn")  # 0.3 s later, but in the next life
    out = m.sync_retry_after(_evidence(m, tmp_path, t))
    assert out.score == 1.0 and "SIGKILL came before the retry" in out.detail
    early = Trace()
    early.ask(page, 503, 1.0, "after-respawn", "retry-after")
    early.records[-1]["retry_after"] = RETRY_AFTER
    early.ask(page, 200, 1.0 + RETRY_AFTER - 0.3, "after-respawn")  # in one life: too soon
    assert m.sync_retry_after(_evidence(m, tmp_path, early)).score == 0.0


def test_backoff_is_graded_per_life_and_a_too_short_pause_in_either_fails(
    m: Any, tmp_path: Path
) -> None:
    page = build_dataset(SEED).faults.backoff_page

    def trace(first_life: list[float], second_life: list[float]) -> Trace:
        t = Trace()
        at = 1.0
        for gap in first_life:
            t.ask(page, 503, at, "initial-sync", "unavailable")
            at += gap
        at += 3.0  # the kill and the restart
        for i, gap in enumerate(second_life):
            last = i == len(second_life) - 1
            t.ask(page, 200 if last else 503, at, "after-respawn")
            at += gap
        return t

    # two 503s before the kill, two more and the answer after: both lives grow 1.5x+
    # (a run of four 503s, as on 3.x; 4.x draws six or seven, ``Evidence.backoff_run``)
    good = _evidence(m, tmp_path, trace([0.2, 0.0], [0.2, 0.4, 0.0]), backoff_run=4)
    assert m.sync_backoff_first(good).score == 1.0
    growth = m.sync_backoff_growth(good)
    assert growth.score == 1.0, growth.detail
    assert BACKOFF_FAILURES == 4  # the 0.2 + kill + 0.2 + 0.4 above are its four retries
    short = _evidence(m, tmp_path, trace([0.2, 0.0], [0.15, 0.4, 0.0]))
    assert m.sync_backoff_first(short).score == 0.0  # the restarted life's first pause
    flat = _evidence(m, tmp_path, trace([0.2, 0.0], [0.25, 0.25, 0.0]), backoff_run=4)
    assert m.sync_backoff_growth(flat).score == 0.0


def test_a_re_ask_of_the_slow_page_after_the_kill_is_not_early(m: Any, tmp_path: Path) -> None:
    page = build_dataset(SEED).faults.slow_page
    killed = Trace(
        (page, 200, 1.0, "initial-sync", "slow"),
        (page, 200, 2.0, "after-respawn"),  # killed while waiting; asked again
        (page + 1, 200, 2.5, "after-respawn"),
    )
    assert m.sync_waits_slow(_evidence(m, tmp_path, killed)).score == 1.0
    hasty = Trace(
        (page, 200, 1.0, "after-respawn", "slow"),
        (page, 200, 2.0, "after-respawn"),  # the same life gave up after 1 s
        (page + 1, 200, 2.5, "after-respawn"),
    )
    assert m.sync_waits_slow(_evidence(m, tmp_path, hasty)).score == 0.0


class _Up:
    """Stands in for the suite's Upstream in ``_resume_from``."""

    def __init__(self, records: list[dict[str, Any]], held_until: float | None) -> None:
        self.dataset = build_dataset(SEED)
        self.held_until = held_until
        self._records = records

    def records(self) -> list[dict[str, Any]]:
        return self._records


def test_a_restart_continues_from_the_held_page_or_after_a_missed_hold_from_the_last(
    m: Any, tmp_path: Path
) -> None:
    kill = build_dataset(SEED).faults.kill_page
    t = Trace()
    for p in range(kill + 3):
        t.ask(p, 200, 0.1 * p, "initial-sync")
    assert m._resume_from(_Up(t.records, None)) == (kill,)  # the kill came during the hold
    assert m._resume_from(_Up(t.records, 5.0)) == (kill + 2, kill + 3)  # answered: or next
    t.ask(kill + 3, 503, 1.0, "initial-sync")
    assert m._resume_from(_Up(t.records, 5.0)) == (kill + 3,)  # a 503: that page again
    after = Trace()
    after.ask(kill + 3, 200, 9.0, "after-respawn")
    ev = _evidence(m, tmp_path, after, resume_from=(kill + 3,))
    assert m.sync_resumes(ev).score == 1.0
    refetch = Trace()
    refetch.ask(kill + 1, 200, 9.0, "after-respawn")
    refetch.ask(kill + 3, 200, 9.1, "after-respawn")
    ev = _evidence(m, tmp_path, refetch, resume_from=(kill + 3,))
    assert m.sync_resumes(ev).score == 0.0


def test_health_during_sync_reads_the_watch(m: Any, tmp_path: Path) -> None:
    stalled = m.WatchLog(answered=1, stalls=["GET /health asked 0.0 s into the hold: timed out"])
    out = m.health_during_sync(_evidence(m, tmp_path, Trace(), health_watch=stalled))
    assert out.score == 0.0 and "timed out" in out.detail
    # the hold ended before the boot poll's answer, and the watch had answers: met
    answered = m.health_during_sync(
        _evidence(m, tmp_path, Trace(), health_watch=m.WatchLog(answered=3))
    )
    assert answered.score == 1.0
    # not listening at all while the page was held: the sync does not run in the background
    refused = m.health_during_sync(
        _evidence(m, tmp_path, Trace(), health_watch=m.WatchLog(refused=12))
    )
    assert refused.score == 0.0
