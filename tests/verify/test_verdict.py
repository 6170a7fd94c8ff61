"""The one place a trial's outcome is decided (verify/verdict.py)."""

from __future__ import annotations

from typing import Any

import pytest

from harness.verify.outcome import Kind, TargetResult, VerifyOutcome
from harness.verify.outcome import TestCase as Case
from harness.verify.rules import RuleResult
from harness.verify.verdict import Verdict, decide

pytestmark = pytest.mark.unit


def target(passed: bool, kind: Kind = "required") -> TargetResult:
    return TargetResult(target=kind, kind=kind, tests=[Case(name="t", passed=passed)])


def outcome(
    *targets: TargetResult,
    rules_ok: bool = True,
    partial: float | None = None,
    score: dict[str, Any] | None = None,
    bar: float | None = None,
    error: str | None = None,
) -> VerifyOutcome:
    rule = RuleResult(rule="must-modify", entry="calc.py", ok=rules_ok, detail="")
    return VerifyOutcome(
        success=False,
        partial_score=partial,
        rules=[rule],
        targets=list(targets),
        changed_files=[],
        hidden_files=[],
        score=score,
        bar=bar,
        error=error,
    )


def test_a_test_based_scenario_needs_rules_required_and_every_partial() -> None:
    assert decide(outcome(target(True), partial=1.0)) == Verdict(True, "success")
    assert decide(outcome(target(True))) == Verdict(True, "success")  # no partial targets
    assert decide(outcome(target(True), partial=0.5)) == Verdict(False, "failed")
    assert decide(outcome(target(False), partial=1.0)) == Verdict(False, "failed")
    assert decide(outcome(target(True), rules_ok=False)) == Verdict(False, "failed")
    assert decide(outcome()) == Verdict(False, "failed")  # no targets: nothing proved


def test_a_partial_target_that_fails_does_not_fail_the_required_check() -> None:
    # the partial score decides for partial targets, not their own pass
    assert decide(outcome(target(True), target(False, "partial"), partial=1.0)).success


def test_a_suite_with_a_bar_needs_a_measurable_final_at_the_bar() -> None:
    at = {"measurable": True, "final": 0.8}
    assert decide(outcome(target(True), score=at, bar=0.8)).success
    assert not decide(outcome(target(True), score={**at, "final": 0.79}, bar=0.8)).success
    assert not decide(outcome(target(True), score={**at, "measurable": False}, bar=0.8)).success
    assert not decide(outcome(target(True), score={"measurable": True}, bar=0.8)).success
    assert not decide(outcome(target(True), rules_ok=False, score=at, bar=0.8)).success
    assert not decide(outcome(target(False), score=at, bar=0.8)).success
    # a suite decides without test targets, and its partial score is not read
    assert decide(outcome(score=at, bar=0.8, partial=0.1)).success


def test_a_spec_with_musts_decides_over_the_bar() -> None:
    met = {"measurable": True, "spec_met": True, "final": 0.1}
    assert decide(outcome(score=met, bar=0.9)).success
    unmet = {"measurable": True, "spec_met": False, "final": 1.0}
    assert not decide(outcome(score=unmet, bar=0.5)).success
    assert not decide(outcome(score={**met, "measurable": False}, bar=0.0)).success
    assert not decide(outcome(score=met, rules_ok=False)).success


def test_errors_and_the_agents_end_set_the_word() -> None:
    good = outcome(target(True))
    assert decide(good, "error") == Verdict(True, "error")
    assert decide(good, "timeout") == Verdict(True, "timeout")
    assert decide(good, "limit") == Verdict(True, "failed")
    assert decide(good, "budget") == Verdict(True, "failed")
    assert decide(good, "success") == Verdict(True, "success")
    broken = outcome(target(True), error="verifier crashed")
    assert decide(broken) == Verdict(False, "error")
    assert decide(broken, "timeout") == Verdict(False, "error")
