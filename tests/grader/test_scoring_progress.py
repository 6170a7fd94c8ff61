"""The progress lines of the long proofs: a count, the time each took, the time left."""

from __future__ import annotations

import pytest

from harness.grader.scoring_progress import Progress, duration, ids

pytestmark = pytest.mark.unit


def test_durations_read_at_a_glance() -> None:
    assert [duration(s) for s in (0.4, 89, 90, 150, 5399, 5400, 15_000)] == [
        "0 s", "89 s", "2 min", "3 min", "90 min", "1.5 h", "4.2 h"
    ]  # fmt: skip


def test_time_left_is_the_mean_real_scoring_times_the_trees_to_come() -> None:
    said: list[str] = []
    p = Progress(5, said.append)
    p.step("seed s reference: final 0.99", 0.1, scored=False)  # from the ledger
    assert said[-1] == "[1/5] seed s reference: final 0.99 (read, not scored)"
    p.step("seed s LOW: final 0.01", 100, scored=True)
    # 3 x 100 s, a bound: the next trees may be read too
    assert said[-1] == "[2/5] seed s LOW: final 0.01 (2 min; at most about 5 min left)"
    p.step("seed s a: final 0.5", 200, scored=True)
    assert p.left_s() == pytest.approx(2 * 150)
    p.step("seed s b: final 0.5", 1, scored=False)
    p.step("seed s c: final 0.5", 150, scored=True)
    assert said[-1] == "[5/5] seed s c: final 0.5 (3 min)"  # nothing left to estimate
    assert len(said) == 5


def test_a_quiet_progress_still_counts() -> None:
    p = Progress(2)
    assert p.step("x", 3, scored=True) == "[1/2] x (3 s; about 3 s left)"  # none was read
    assert p.done == 1 and p.scored == [3]


def test_a_long_list_of_unmet_ids_is_counted() -> None:
    assert ids(["M-B-2", "M-A-1"]) == "M-A-1,M-B-2"
    assert ids([f"M-X-{i}" for i in range(54)]) == "54 MUSTs"
