"""The pure statistics behind rankings: standard errors, "not measurable", Pareto."""

from __future__ import annotations

import math

import pytest

from harness.report.stats import (
    NOT_MEASURABLE,
    Estimate,
    estimate,
    measurable,
    pareto_front,
    rank,
)

pytestmark = pytest.mark.unit


def test_estimate_mean_and_standard_error() -> None:
    e = estimate([1.0, 0.0, 1.0, 0.0])
    assert e.mean == 0.5 and e.n == 4
    assert e.se == pytest.approx(math.sqrt(1 / 3) / 2)
    assert estimate([0.7]) == Estimate(0.7, None, 1)  # one run: error unknown, not zero
    assert estimate([]) == Estimate(None, None, 0)


def test_differences_inside_the_combined_error_are_not_measurable() -> None:
    a, b = Estimate(0.80, 0.05, 5), Estimate(0.75, 0.05, 5)  # 0.05 < sqrt(2)*0.05
    assert not measurable(a, b)
    assert measurable(Estimate(0.9, 0.01, 5), Estimate(0.5, 0.01, 5))
    assert not measurable(Estimate(1.0, None, 1), Estimate(0.0, None, 1))


def test_rank_shares_places_it_cannot_tell_apart() -> None:
    ests = [
        Estimate(0.5, 0.01, 9),
        Estimate(0.9, 0.01, 9),
        Estimate(0.88, 0.02, 9),
        Estimate(None, None, 0),
    ]
    placings = rank(ests)
    assert [p.index for p in placings] == [1, 2, 0, 3]
    assert [p.rank for p in placings] == [1, 1, 3, 3]
    assert placings[1].vs_above == NOT_MEASURABLE and placings[2].vs_above == "below"


def test_pareto_front_prefers_cheap_and_good() -> None:
    points = [(1.0, 0.5), (2.0, 0.9), (3.0, 0.8), (0.5, 0.1), (2.0, 0.9)]
    assert pareto_front(points) == [3, 0, 1, 4]
    assert pareto_front([]) == []
