"""Outcome parity with the reference: a hidden test counts only if it *passes*.

The verifier first runs every target on the reference tree (the baseline with the
scenario's solution and the hidden tests, before any of the agent's code has run;
``verify.reference``) and keeps, per target, the names of the tests that passed there.
For the candidate each of those names counts only if the candidate's run reports it
passed: skipped, xfailed, deselected, errored, missing or renamed is a failure, whatever
made it so (a dynamic ``xfail`` marker added by the code under test, ``pytest.skip``
from the code, a Go ``t.Skip`` found through ``runtime.Stack``, every test skipped). A
target where nothing passed never passes (where the reference passed tests: a target with
no tests keeps goagentbench's verdict). This is a comparison made by the verifier's
controller, after every process of the run is dead: out of the test process's reach.

Pure functions over results.
"""

from __future__ import annotations

from collections.abc import Iterable

from harness.verify.outcome import TargetResult, TestCase

MISSING = (
    "did not pass (it passes on the reference: skipped, xfailed, deselected, errored, "
    "missing or renamed counts as failed)"
)
NOTHING = "no test passed (a target where nothing passed never passes)"


def passed_names(result: TargetResult) -> frozenset[str]:
    """The names of the tests that really ran and passed (synthetic cases left out)."""
    return frozenset(c.name for c in result.tests if c.passed and not c.synthetic)


def hold_to(result: TargetResult, expected: Iterable[str] | None) -> TargetResult:
    """``result`` with every ``expected`` name it did not pass added as a failed case
    (``ok`` false), and failed when nothing passed where the reference passed tests.
    A reference test reported as an ordinary failure stays one (partial credit as
    before the walls); a reference test the run left out refuses the whole target.
    ``expected`` None (no reference) or empty (the reference passes none there: a target
    with no tests, which goagentbench passes on ``go test``'s exit 0): the runner's
    verdict stands."""
    passed = passed_names(result)
    missing = sorted(set(expected or ()) - passed)
    tests = list(result.tests)
    update: dict[str, object] = {}
    if missing:
        have = {c.name for c in tests}
        absent = [name for name in missing if name not in have]
        for name in absent:  # a name reported as failed is already a plain failure
            tests.append(TestCase(name=name, passed=False, error="did not pass", output=MISSING))
        tests = [
            c.model_copy(update={"error": c.error or "did not pass"})
            if c.name in missing and not c.passed
            else c
            for c in tests
        ]
        update = {"tests": tests, "ok": False}
        if absent:  # skipped, xfailed, deselected or renamed: the target is refused whole
            more = f" and {len(absent) - 3} more" if len(absent) > 3 else ""
            first = ", ".join(absent[:3]) + more
            update["error"] = (
                result.error or f"{len(absent)} test(s) of the reference {MISSING}: {first}"
            )
    elif not passed and expected:
        update = {"ok": False, "error": result.error or NOTHING}
    return result.model_copy(update=update) if update else result


def missing_names(result: TargetResult, expected: Iterable[str]) -> list[str]:
    """The ``expected`` names ``result`` did not pass."""
    return sorted(set(expected) - passed_names(result))
