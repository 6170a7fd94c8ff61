"""Paired comparisons by hand: exact McNemar, Holm, bootstrap, correlation, ranks of entrants."""

from __future__ import annotations

import math
import random
import statistics

import pytest

from harness.report.paired import (
    bootstrap,
    compare,
    correlation,
    holm,
    mcnemar_exact,
    rank,
    smallest_p,
)
from harness.report.stats import clustered

pytestmark = pytest.mark.unit

Z = 1.959963984540054


def test_mcnemar_exact_p_by_hand() -> None:
    assert mcnemar_exact(5, 0) == pytest.approx(2 / 32)
    assert mcnemar_exact(7, 1) == pytest.approx(2 * 9 / 256)
    assert mcnemar_exact(2, 10) == pytest.approx(2 * (1 + 12 + 66) / 4096)
    assert mcnemar_exact(3, 3) == 1.0 and mcnemar_exact(0, 0) == 1.0
    assert smallest_p(5) == 0.0625 and smallest_p(6) == 0.03125


def test_holm_adjusts_step_down_by_hand() -> None:
    assert holm([0.01, 0.04, 0.03, 0.5]) == pytest.approx([0.04, 0.09, 0.09, 0.5])
    assert holm([0.2]) == [0.2] and holm([]) == []
    assert holm([0.6, 0.6]) == [1.0, 1.0]


def test_paired_beats_unpaired_on_correlated_scenarios() -> None:
    a = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2]  # shared difficulty, B 0.1 behind
    noise = [0.02, -0.02] * 4
    b = [x - 0.1 + e for x, e in zip(a, noise, strict=True)]
    pa = {f"s{i}": [x] for i, x in enumerate(a)}
    pb = {f"s{i}": [x] for i, x in enumerate(b)}
    pr = compare(pa, pb)
    assert pr.t == 8 and pr.diff == pytest.approx(0.1) and pr.method == "bootstrap"
    assert pr.se == pytest.approx(math.sqrt(8 * 0.02**2 / 7 / 8))
    unpaired = math.sqrt(statistics.variance(a) / 8 + statistics.variance(b) / 8)
    assert statistics.variance(a) == pytest.approx(0.42 / 7)
    assert pr.unpaired_se == pytest.approx(unpaired) and pr.unpaired_se > 10 * pr.se
    assert pr.diff / pr.unpaired_se < Z  # unpaired: no difference seen
    assert pr.p == pytest.approx(2 / 256)  # paired: 8 of 8 won; the exact sign test's p
    assert pr.low is not None and pr.low > 0 and pr.correlation is not None
    assert pr.correlation > 0.99 and (pr.b, pr.c) == (8, 0)


def test_one_binary_trial_each_is_mcnemar_and_graded_never_beats_the_sign_test() -> None:
    a = {f"s{i}": [1.0] for i in range(10)}
    b = {f"s{i}": [1.0 if i < 3 else 0.0] for i in range(10)} | {"s8": [1.0]}
    a["s8"] = [0.0]
    pr = compare(a, b)  # a wins s3..s7 and s9 (6), b wins s8 (1)
    assert pr.method == "mcnemar" and (pr.b, pr.c) == (6, 1)
    assert pr.p == pytest.approx(2 * 8 / 128)
    graded = compare({"x": [0.9], "y": [0.8]}, {"x": [0.1], "y": [0.2]})  # T = 2
    assert graded.method == "bootstrap" and graded.p >= 0.5  # the bootstrap alone says 0
    assert compare({"x": [1.0]}, {"y": [0.0]}).method == "none"


def test_bootstrap_is_reproducible_with_its_fixed_seed() -> None:
    d = [0.1, -0.05, 0.2, 0.0, 0.15, -0.1, 0.05]
    assert bootstrap(d) == bootstrap(d)
    low, high, p = bootstrap(d)
    assert low < sum(d) / len(d) < high and 0 < p < 1


def test_correlation_by_hand() -> None:
    assert correlation([1, 2, 3], [1, 2, 4]) == pytest.approx(3 / math.sqrt(2 * 42 / 9))
    assert correlation([1, 1], [0, 1]) is None and correlation([1], [1]) is None


def _ranks(entrants: list[dict[str, list[float]]], quick: bool = False) -> list[int]:
    pairs = {
        (i, j): compare(entrants[i], entrants[j], quick=quick)
        for i in range(len(entrants))
        for j in range(i + 1, len(entrants))
    }
    means = [clustered(e).mean for e in entrants]
    placings, _ = rank(means, pairs)
    return [p.rank for p in sorted(placings, key=lambda p: p.index)]


def test_a_single_run_entrant_does_not_move_the_others() -> None:
    oracle = {f"s{i}": [1.0] for i in range(7)}
    nop = {f"s{i}": [0.0] for i in range(7)}
    one = {"s0": [0.5]}
    assert _ranks([oracle, nop]) == [1, 2]
    assert _ranks([oracle, nop, one]) == [1, 2, 1]  # one ties everyone, moves no one
    assert _ranks([one, nop, oracle]) == [1, 2, 1]
    # 5 shared scenarios, 5-0: exact McNemar p = 0.0625, so no honest test separates
    assert _ranks([oracle, {f"s{i}": [0.0] for i in range(5)}, one]) == [1, 1, 1]


def test_holm_decides_between_many_entrants() -> None:
    strong = {f"s{i}": [1.0] for i in range(8)}
    mid = {f"s{i}": [1.0 if i < 4 else 0.0] for i in range(8)}
    weak = {f"s{i}": [0.0] for i in range(8)}
    # strong-weak: 8-0, p = 0.0078 -> Holm x3 = 0.023, separable; strong-mid 4-0 and
    # mid-weak 4-0 (p = 0.125) are not
    assert _ranks([strong, mid, weak]) == [1, 1, 2]


def test_quick_pairs_skip_the_bootstrap_but_never_change_a_rank() -> None:
    rng = random.Random(7)
    entrants = [
        {f"s{t}": [min(1.0, max(0.0, rng.gauss(0.2 * e + 0.1 * (t % 3), 0.15)))] for t in range(12)}
        for e in range(3)
    ] + [{f"s{t}": [float(t % (e + 2) == 0)] for t in range(12)} for e in range(2)]
    assert _ranks(entrants, quick=True) == _ranks(entrants)
    assert len(set(_ranks(entrants))) > 1  # the data does separate some of them
    quick = compare(entrants[0], entrants[2], quick=True)
    assert quick.p == compare(entrants[0], entrants[2]).p  # the decisive pairs in full
