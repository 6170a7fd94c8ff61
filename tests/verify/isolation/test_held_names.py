"""Results that name tests the hidden suite does not hold are rejected."""

from __future__ import annotations

import pytest

from harness.verify import outcome as results
from harness.verify.isolation.held_names import pytest_names, reject, rejection
from harness.verify.outcome import TargetResult

pytestmark = pytest.mark.unit


def case(name: str, passed: bool = True) -> results.TestCase:
    return results.TestCase(name=name, passed=passed)


def test_results_naming_unheld_tests_are_rejected() -> None:
    held = pytest_names(
        "import pytest\n\n@pytest.mark.parametrize('x', [1])\ndef test_a(x): pass\n\n"
        "class TestB:\n    def test_m(self): pass\n"
    )
    fine = TargetResult(
        target="t",
        kind="required",
        tests=[case("tests.test_x::test_a[1]"), case("tests.test_x.TestB::test_m")],
    )
    assert rejection(fine, held, "pytest") is None
    forged = fine.model_copy(update={"tests": [*fine.tests, case("tests.test_x::test_bonus")]})
    why = rejection(forged, held, "pytest")
    assert why is not None and "test_bonus" in why
    twice = fine.model_copy(update={"tests": [case("m::test_a[1]"), case("m::test_a[1]")]})
    assert "more often" in (rejection(twice, held, "pytest") or "")
    go = TargetResult(target="./m", kind="required", tests=[case("TestAbs/sub")])
    assert rejection(go, {"TestAbs"}, "go") is None
    assert rejection(go, {"TestOther"}, "go") is not None
    out = reject(forged, why)
    assert out.ok is False and out.passed == 0 and out.error and out.error.startswith("rejected")
