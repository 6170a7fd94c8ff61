"""The pure statistics behind reports, checked by hand: Wilson bounds, clustered
standard errors, pass@k and pass^k, flip rate, the MDE formula and power planning."""

from __future__ import annotations

import math

import pytest

from harness.report.paired import plan, scenarios_needed
from harness.report.stats import (
    Estimate,
    clustered,
    estimate,
    flip_rate,
    mde,
    pareto_front,
    pass_at_k,
    pass_hat_k,
    wilson,
)

pytestmark = pytest.mark.unit

Z = 1.959963984540054


def test_wilson_bounds_by_hand() -> None:
    low, high = wilson(0.0, 10)  # no success in 10: upper = z^2 / (n + z^2)
    assert low == 0.0 and high == pytest.approx(Z**2 / (10 + Z**2))
    assert high == pytest.approx(0.27753, abs=1e-5)
    low, high = wilson(0.5, 20)  # 10 of 20
    assert (low, high) == (pytest.approx(0.29930, abs=1e-5), pytest.approx(0.70070, abs=1e-5))
    low, high = wilson(1.0, 7)  # 7 of 7: the interval stays below 1 at its lower end
    assert high == 1.0 and low == pytest.approx(7 / (7 + Z**2))


def test_estimate_uses_t_inside_and_wilson_near_the_bounds() -> None:
    values = [0.2, 0.4, 0.6, 0.8, 0.5, 0.5, 0.3, 0.7, 0.6, 0.4]
    e = estimate(values)
    var = sum((v - 0.5) ** 2 for v in values) / 9
    se = math.sqrt(var / 10)
    assert e.method == "t" and e.mean == pytest.approx(0.5) and e.se == pytest.approx(se)
    assert e.low == pytest.approx(0.5 - 2.262157 * se, abs=1e-6)
    near = estimate([1.0, 1.0, 1.0, 0.0])  # 1 "failure" of 4: Wilson, not a t interval
    assert near.method == "wilson" and (near.low, near.high) == wilson(0.75, 4)
    one = estimate([0.7])  # one scenario: SE unknown, not zero, and a wide interval
    assert one.se is None and one.method == "wilson" and one.high - one.low > 0.7
    assert estimate([]) == Estimate(None, None, 0)


def test_clustered_mean_and_se_treat_a_scenarios_trials_as_one_cluster() -> None:
    clusters = {"a": [1.0, 1.0, 0.0], "b": [0.0, 0.0], "c": [1.0]}
    e = clustered(clusters)  # scenario means 2/3, 0, 1
    assert e.mean == pytest.approx(5 / 9)  # not 3/6 over the pooled trials
    assert e.se == pytest.approx(math.sqrt(7) / 9)  # var 7/27 over 3 scenarios
    # Ten times the trials cannot manufacture precision: same clusters, same SE.
    more = clustered({k: v * 10 for k, v in clusters.items()})
    assert more.se == pytest.approx(e.se)
    pooled = estimate([x for v in clusters.values() for x in v * 10], bounded=False)
    assert pooled.se is not None and pooled.se < e.se / 2  # what the naive SE would claim


def test_pass_at_k_and_pass_hat_k_by_hand() -> None:
    counts = [(5, 2), (5, 5), (1, 1)]  # the 1-trial scenario cannot speak for k=2
    assert pass_at_k(counts, 2) == pytest.approx(((1 - 3 / 10) + 1.0) / 2)
    assert pass_hat_k(counts, 2) == pytest.approx((1 / 10 + 1.0) / 2)
    assert pass_at_k([(3, 0)], 3) == 0.0 and pass_hat_k([(3, 3)], 3) == 1.0
    assert pass_at_k([(4, 1)], 1) == pytest.approx(0.25)  # pass@1 is the success rate
    assert pass_at_k([(1, 1)], 2) is None
    assert flip_rate({"a": [1.0, 0.0], "b": [1.0, 1.0], "c": [0.0]}) == 0.5


def test_mde_formula_and_scenarios_needed() -> None:
    assert mde(1.0) == pytest.approx(Z + 0.841621, abs=1e-6)  # 2.80 per unit of SE
    se = math.sqrt(2 * 0.25 * (1 - 0.5) / 12)  # the design note's worked example
    assert mde(se) == pytest.approx(0.404, abs=1e-3)
    z2 = (Z + 0.8416212335729143) ** 2
    assert scenarios_needed(0.1, 0.25, 0.0, 1) == math.ceil(z2 * 0.25 / 0.01)  # 197
    p = plan(0.1, 0.05, 0.06, 3)  # var of differences seen at K=3; within 0.06
    assert p.between == pytest.approx(0.03)
    assert p.needed == {
        1: math.ceil(z2 * 0.09 / 0.01),
        3: math.ceil(z2 * 0.05 / 0.01),
        5: math.ceil(z2 * 0.042 / 0.01),
    }
    assert plan(0.1, None, None, 1).needed[1] == 197
    assert scenarios_needed(0.9, 0.01, 0.0, 1) == 6  # never below the exact-test floor


def test_pareto_front_prefers_cheap_and_good() -> None:
    points = [(1.0, 0.5), (2.0, 0.9), (3.0, 0.8), (0.5, 0.1), (2.0, 0.9)]
    assert pareto_front(points) == [3, 0, 1, 4]
    assert pareto_front([]) == []
