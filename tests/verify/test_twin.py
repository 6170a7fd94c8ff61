"""Negative twins, runner-agnostic: one literal perturbed, and the judgement
(verify/twin.py)."""

from __future__ import annotations

import math

import pytest

from harness.verify.outcome import TargetResult
from harness.verify.outcome import TestCase as Case
from harness.verify.twin import SUFFIX, forged_names, judgement, perturb

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    "value,expected",
    [
        (True, False),
        (False, True),
        (3, 4),
        (-1, 0),
        (2.5, 3.5),
        (1e16, 2e16 + 1.0),  # where +1 is lost in the float, it still moves
        (1 + 2j, 2 + 2j),
        ("ok", "ok" + SUFFIX),
        ("", SUFFIX),
        (b"x", b"x" + SUFFIX.encode()),
    ],
)
def test_a_literal_moves(value: object, expected: object) -> None:
    changed, twin = perturb(value)
    assert changed and twin == expected and type(twin) is type(expected)
    assert twin != value


@pytest.mark.parametrize("value", [None, math.inf, -math.inf, (1, 2), [1]])
def test_what_cannot_move_is_left_alone(value: object) -> None:
    assert perturb(value) == (False, value)


def test_nan_is_left_alone() -> None:
    changed, twin = perturb(math.nan)
    assert not changed and isinstance(twin, float) and math.isnan(twin)


def case(name: str, passed: bool = True, synthetic: bool = False) -> Case:
    return Case(name=name, passed=passed, synthetic=synthetic)


def test_forged_means_passed_both_where_the_reference_fails_the_twin() -> None:
    ran = TargetResult(target="t", kind="required", tests=[case("a"), case("b"), case("c")])
    twin = TargetResult(
        target="t", kind="required", tests=[case("a"), case("b", passed=False), case("c")]
    )
    assert forged_names(ran, twin, ["a", "b"]) == ["a"]  # c: the reference passes its twin
    assert forged_names(ran, twin, []) == []  # proves nothing
    synthetic = TargetResult(target="t", kind="required", tests=[case("a", synthetic=True)])
    real = TargetResult(target="t", kind="required", tests=[case("a")])
    assert forged_names(synthetic, real, ["a"]) == []  # a build that passed is no test
    assert forged_names(real, synthetic, ["a"]) == []


def test_the_judgement_names_up_to_three() -> None:
    assert judgement([]) is None
    one = judgement(["a"])
    assert one is not None and "passes a and the negative twin too" in one
    many = judgement(["a", "b", "c", "d", "e"])
    assert many is not None and "a, b, c and 2 more" in many and "twins too" in many
