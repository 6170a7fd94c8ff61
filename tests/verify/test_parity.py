"""Outcome parity with the reference: a hidden test counts only if it passes
(verify/parity.py)."""

from __future__ import annotations

import pytest

from harness.verify.outcome import TargetResult
from harness.verify.outcome import TestCase as Case
from harness.verify.parity import MISSING, NOTHING, hold_to, missing_names, passed_names

pytestmark = pytest.mark.unit


def case(name: str, passed: bool = True, synthetic: bool = False) -> Case:
    return Case(name=name, passed=passed, synthetic=synthetic)


def target(*tests: Case, ok: bool | None = None, error: str | None = None) -> TargetResult:
    return TargetResult(target="t", kind="required", tests=list(tests), ok=ok, error=error)


def test_parity_refuses_a_target_that_left_a_reference_pass_out() -> None:
    ran = target(case("a"), ok=True)
    held = hold_to(ran, {"a", "b"})  # b skipped, xfailed or renamed: it did not pass
    assert held.ok is False and [(c.name, c.passed) for c in held.tests] == [
        ("a", True),
        ("b", False),
    ]
    assert held.tests[1].output == MISSING
    assert held.error and "of the reference did not pass" in held.error  # refused whole
    assert hold_to(ran, {"a"}) is ran  # nothing to add: the runner's verdict stands


def test_a_reference_test_that_ran_and_failed_is_a_plain_failure() -> None:
    failing = target(case("a"), case("b", passed=False))
    plain = hold_to(failing, {"a", "b"})  # partial credit, as before the walls
    assert plain.ok is False and plain.error is None and (plain.passed, plain.total) == (1, 2)
    assert plain.tests[1].error == "did not pass"


def test_nothing_passed_never_passes_where_the_reference_passed_tests() -> None:
    none = target(ok=True)
    held = hold_to(none, {"a"})
    assert held.ok is False and held.error and "of the reference" in held.error
    assert hold_to(none, set()).ok is True  # no tests there on the reference either
    assert hold_to(none, None).ok is True  # no reference: the runner's verdict
    only_build = target(case("build", synthetic=True), ok=True)
    # a synthetic pass (a build that stands for the tests) is no pass of a reference test
    assert hold_to(only_build, {"build"}).ok is False


def test_the_runners_own_error_is_kept() -> None:
    held = hold_to(target(case("a", passed=False), error="build failed"), {"a", "b"})
    assert held.error == "build failed" and held.ok is False
    assert hold_to(target(error="exit 2"), {"x"}).error == "exit 2"
    assert NOTHING not in (hold_to(target(error="exit 2"), {"x"}).error or "")


def test_many_missing_names_are_shown_three_and_counted() -> None:
    held = hold_to(target(), {"a", "b", "c", "d", "e"})
    assert held.error is not None
    assert "5 test(s)" in held.error and "a, b, c and 2 more" in held.error
    four = hold_to(target(), {"a", "b", "c", "d"}).error
    assert four is not None and "a, b, c and 1 more" in four
    three = hold_to(target(), {"a", "b", "c"}).error
    assert three is not None and three.endswith(": a, b, c")


def test_synthetic_cases_do_not_count_as_passed() -> None:
    result = target(case("a"), case("build", synthetic=True), case("c", passed=False))
    assert passed_names(result) == {"a"}
    assert missing_names(result, ["c", "build", "a"]) == ["build", "c"]
