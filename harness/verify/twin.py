"""Negative twins: the hidden tests with their literal expectations perturbed.

A twin of a hidden test file is the same file with the constants its assertions compare
against changed (``assert f(x) == 3`` becomes ``== 4``; see ``verify.pytwin`` for what a
Python twin perturbs). Honest code fails the twin: it computes the answer, and the answer
is no longer the expectation. Code that passes a test *and* its twin read the
expectation (the caller's bytecode or locals, the test file, ``runtime.Caller``) or faked
it (an object equal to everything, ``mock.ANY``): the target is forged.

Which twin tests count is measured, not guessed: only those the reference solution
fails in its twin run (``verify.reference``); a twin test the reference passes (its
perturbed assertion never ran, say) proves nothing and is left out.

This module is runner-agnostic: the perturbation of one literal value and the judgement.
A runner's twin writer (``pytwin`` for Python) finds the literals in its syntax tree.
"""

from __future__ import annotations

from collections.abc import Iterable

from harness.verify.outcome import TargetResult

SUFFIX = "!"
FORGED = (
    "forged: passes {names} and the negative twin{s} too (the same test{s} with the "
    "expected values changed): the code read or faked the expectation"
)


def perturb(value: object) -> tuple[bool, object]:
    """(changed, the value a twin compares against). Numbers move by one, a bool flips,
    a string or bytes gains a character; anything else is left alone (False)."""
    if isinstance(value, bool):
        return True, not value
    if isinstance(value, int):
        return True, value + 1
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return False, value
        return True, value + 1.0 if abs(value) < 1e15 else value * 2 + 1.0
    if isinstance(value, complex):
        return True, value + 1
    if isinstance(value, str):
        return True, value + SUFFIX
    if isinstance(value, bytes):
        return True, value + SUFFIX.encode()
    return False, value


def forged_names(
    target: TargetResult, twin: TargetResult, reference_twin_failed: Iterable[str]
) -> list[str]:
    """Tests the candidate passed in the target *and* in its twin, where the reference
    fails the twin (honest code cannot pass it)."""
    passed = {c.name for c in target.tests if c.passed and not c.synthetic}
    twin_passed = {c.name for c in twin.tests if c.passed and not c.synthetic}
    return sorted(passed & twin_passed & set(reference_twin_failed))


def judgement(names: list[str]) -> str | None:
    """The rejection reason for ``names`` (None when empty)."""
    if not names:
        return None
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return FORGED.format(names=shown, s="s" if len(names) > 1 else "")
