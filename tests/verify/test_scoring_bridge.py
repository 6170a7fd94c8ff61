"""A graded, era-stamped score attached to a verification outcome
(verify/scoring_bridge.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import UserError
from harness.scoring import Score
from harness.scoring.rows import Row
from harness.verify.outcome import Kind, TargetResult, VerifyOutcome
from harness.verify.outcome import TestCase as Case
from harness.verify.request import VerifyRequest
from harness.verify.rules import RuleResult
from harness.verify.scoring_bridge import (
    CHECK_PREFIX,
    SCORER_KINDS,
    TESTS_SUITE_VERSION,
    attach_score,
    load_suite_module,
    scorer_kind,
)
from harness.verify.scoring_bridge import (
    tests_score as implicit_score,  # not a test: pytest collects names starting with test
)

pytestmark = pytest.mark.unit


def target(
    name: str, kind: Kind, *passed: bool, ok: bool | None = None, exit_code: int | None = None
) -> TargetResult:
    tests = [Case(name=f"{name}::{i}", passed=p) for i, p in enumerate(passed)]
    return TargetResult(target=name, kind=kind, tests=tests, ok=ok, exit_code=exit_code)


def outcome(*targets: TargetResult, rules_ok: bool = True) -> VerifyOutcome:
    rule = RuleResult(rule="must-modify", entry="calc.py", ok=rules_ok, detail="not modified")
    return VerifyOutcome(
        success=False, partial_score=None, rules=[rule], targets=list(targets),
        changed_files=["calc.py"], hidden_files=[],
    )  # fmt: skip


def request(**fields: object) -> VerifyRequest:
    base = {"scenario": "s", "baseline": "b", "seed": "1", "runner": "pytest", "hidden_root": "/h"}
    return VerifyRequest.model_validate({**base, **fields})


def row(score: Score, check: str) -> Row:
    return next(r for r in score.rows if r.check == check)


def test_the_implicit_suite_has_one_check_per_target_and_the_rules() -> None:
    score = implicit_score(outcome(target("a.py", "required", True, True)))
    checks = [r.check for r in score.rows]
    assert f"{CHECK_PREFIX}a.py" in checks and len(checks) == 2
    assert score.measurable and score.final == 1.0
    assert score.era is not None and TESTS_SUITE_VERSION in score.era
    broken = implicit_score(outcome(target("a.py", "required", True), rules_ok=False))
    assert broken.final == 0.0  # the rules are a critical
    rules = [r for r in broken.rows if r.check != f"{CHECK_PREFIX}a.py"]
    assert "must-modify calc.py: not modified" in rules[0].detail


def test_a_required_target_is_graded_by_its_command() -> None:
    # goagentbench: a command that succeeded with no test files passes (1/1)
    empty = implicit_score(outcome(target("./pkg", "required", ok=True)))
    assert row(empty, f"{CHECK_PREFIX}./pkg").score == 1.0
    # every parsed test passed, yet the command failed: failed
    lying = implicit_score(outcome(target("./pkg", "required", True, ok=False, exit_code=2)))
    got = row(lying, f"{CHECK_PREFIX}./pkg")
    assert got.score == 0.0 and "exit 2" in got.detail
    # a partial target keeps its counts whatever its command said
    part = implicit_score(outcome(target("p.py", "partial", True, False, ok=False)))
    assert row(part, f"{CHECK_PREFIX}p.py").score == 0.5
    passing = implicit_score(outcome(target("p.py", "partial", True, ok=False, exit_code=1)))
    assert row(passing, f"{CHECK_PREFIX}p.py").score == 1.0


def test_the_kind_follows_the_suite_and_both_kinds_are_registered() -> None:
    assert scorer_kind(request()) == "tests"
    assert scorer_kind(request(suite_dir="/s")) == "suite"
    assert {"tests", "suite"} <= set(SCORER_KINDS.names())


def test_copy_only_decides_without_scoring(tmp_path: Path) -> None:
    done = attach_score(
        outcome(target("a.py", "required", True)), request(copy_only=True), tmp_path
    )
    assert done.score is None and done.era is None and done.success


def test_a_scored_outcome_carries_score_era_text_and_success(tmp_path: Path) -> None:
    good = attach_score(outcome(target("a.py", "required", True)), request(), tmp_path)
    assert good.success and good.bar is None and good.error is None
    assert good.score is not None and good.score["final"] == 1.0
    assert good.era is not None and "final" in good.report_text
    bad = attach_score(outcome(target("a.py", "required", False)), request(), tmp_path)
    assert not bad.success and bad.score is not None and bad.score["final"] == 0.0


def test_a_suite_folder_needs_its_suite_py(tmp_path: Path) -> None:
    with pytest.raises(UserError) as caught:
        load_suite_module(tmp_path)
    assert "suite.py" in str(caught.value)
    (tmp_path / "suite.py").write_text("suite = 'mine'\n")
    assert load_suite_module(tmp_path).suite == "mine"
