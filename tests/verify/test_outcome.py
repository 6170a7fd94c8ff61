"""Result types of a verification: counts and verdicts of a target (verify/outcome.py)."""

from __future__ import annotations

import pytest

from harness.verify.outcome import TargetResult, VerifyOutcome
from harness.verify.outcome import TestCase as Case

pytestmark = pytest.mark.unit


def result(*tests: Case, ok: bool | None = None, error: str | None = None) -> TargetResult:
    return TargetResult(target="t", kind="required", tests=list(tests), ok=ok, error=error)


def test_counts_over_every_case_and_over_the_cases_that_ran() -> None:
    done = result(
        Case(name="a", passed=True),
        Case(name="b", passed=False),
        Case(name="build", passed=True, synthetic=True),
    )
    assert (done.passed, done.total) == (2, 3)
    assert done.ran == (1, 2)  # the synthetic build case is no test that ran


def test_the_runners_ok_decides_when_it_set_one() -> None:
    assert result(Case(name="a", passed=False), ok=True).all_passed is True
    assert result(Case(name="a", passed=True), ok=False).all_passed is False


def test_without_the_runners_ok_every_test_must_pass() -> None:
    assert result(Case(name="a", passed=True)).all_passed is True
    assert result(Case(name="a", passed=True), Case(name="b", passed=False)).all_passed is False
    assert result().all_passed is False  # no tests is no pass
    assert result(Case(name="a", passed=True), error="timeout").all_passed is False


def test_an_ungraded_outcome_is_no_success_and_has_nothing_graded() -> None:
    failed = VerifyOutcome.ungraded(error="verifier crashed")
    assert failed.success is False and failed.partial_score is None
    assert failed.error == "verifier crashed" and failed.report_text == ""
    assert failed.targets == [] and failed.rules == [] and failed.changed_files == []
    stopped = VerifyOutcome.ungraded(report_text="not graded: budget")
    assert stopped.error is None and stopped.report_text == "not graded: budget"
    assert stopped.model_dump()["restored"] == []  # lists default to empty, not shared
