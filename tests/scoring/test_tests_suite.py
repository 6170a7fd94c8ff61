"""The implicit suite of test-based scenarios."""

from __future__ import annotations

import math

import pytest

from harness.errors import UserError
from harness.scoring import Scorer, Status, TestTargetResult, render_text, suite_from_tests

pytestmark = pytest.mark.unit


def _targets() -> list[TestTargetResult]:
    return [
        TestTargetResult("./internal/sorting", "required", 3, 4),
        TestTargetResult("./internal/money", "required", 0, 5, "build failed: undefined X"),
        TestTargetResult("tests/test_extra.py", "partial", 1, 2),
    ]


def test_targets_are_graded_by_fraction_passed() -> None:
    suite, rows = suite_from_tests(_targets(), True, "no protected file changed")
    assert suite.tier_weights == {"core": 0.8, "partial": 0.2}
    by = {r.check: r for r in rows}
    assert by["./internal/sorting"].score == 0.75 and by["./internal/sorting"].tier == "core"
    assert by["./internal/money"].score == 0.0 and "build failed" in by["./internal/money"].detail
    assert by["tests/test_extra.py"].tier == "partial"
    score = Scorer(suite).score_rows(rows)
    assert math.isclose(score.final, 0.8 * (0.75 + 0.0) / 2 + 0.2 * 0.5)
    assert score.era == "tests@1.0.0"
    assert "tests in ./internal/money fail" in render_text(score)


def test_rules_violation_zeroes_an_untrustworthy_result() -> None:
    suite, rows = suite_from_tests(_targets(), False, "go.mod changed")
    score = Scorer(suite).score_rows(rows)
    assert score.final == 0.0
    assert score.factors[0].check == "modification-rules"
    assert "the modification rules do not hold" in render_text(score)
    assert "protected files changed" not in render_text(score)  # must-modify is no such thing


def test_single_kind_takes_full_weight_and_passes_selftest() -> None:
    for kind in ("required", "partial"):
        suite, rows = suite_from_tests([TestTargetResult("pkg", kind, 2, 2)], True, "ok")
        assert list(suite.tier_weights.values()) == [1.0]
        assert Scorer(suite).score_rows(rows).final == 1.0


def test_no_tests_and_no_error_is_unavailable() -> None:
    suite, rows = suite_from_tests(
        [TestTargetResult("a", "required", 1, 1), TestTargetResult("b", "required", 0, 0)],
        True,
        "ok",
    )
    assert rows[1].status is Status.UNAVAILABLE
    score = Scorer(suite).score_rows(rows)
    assert score.final == 1.0 and score.unavailable == ["b"]


def test_no_targets_is_a_user_error() -> None:
    with pytest.raises(UserError, match="no test targets"):
        suite_from_tests([], True, "ok")
