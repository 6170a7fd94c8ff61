"""Honest statistics of one entrant, pure and without I/O.

Trials of one scenario are a cluster, never independent samples: an entrant's figure is
the mean over scenarios of each scenario's mean (Miller, "Adding Error Bars to Evals"),
its standard error is the spread of those scenario means over sqrt(T), and its 95%
interval is Student's t with T-1 degrees of freedom, or Wilson's score interval when the
mean sits near 0 or 1 (fewer than five "successes" or "failures" in T) where the t
interval would collapse or leave [0, 1]. pass@k and pass^k are the unbiased estimators
over scenarios with at least k trials. Paired comparisons live in ``paired``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from harness.report.dist import t_quantile, z_quantile

NOT_MEASURABLE = "not measurable"
TOO_FEW = "too few runs"  # shown apart: no paired test could place it against anyone
ALPHA = 0.05
POWER = 0.80


@dataclass(frozen=True)
class Estimate:
    """A mean over ``n`` scenarios (clusters) with its standard error and 95% interval.

    ``se`` is None when n < 2 (unknown, not zero); the interval is then Wilson's, which
    is wide for a small n instead of pretending to know.
    """

    mean: float | None
    se: float | None
    n: int
    low: float | None = None
    high: float | None = None
    method: str = ""  # "t", "wilson" or "" (nothing to estimate)


def mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def sample_var(values: Sequence[float]) -> float | None:
    """The unbiased sample variance (n - 1 in the denominator); None when n < 2."""
    n = len(values)
    if n < 2:
        return None
    m = sum(values) / n
    return sum((v - m) ** 2 for v in values) / (n - 1)


def wilson(p: float, n: int, alpha: float = ALPHA) -> tuple[float, float]:
    """Wilson's score interval for a proportion ``p`` observed over ``n``."""
    if n <= 0:
        return (0.0, 1.0)
    z = z_quantile(1 - alpha / 2)
    centre = p + z * z / (2 * n)
    half = z * math.sqrt(max(0.0, p * (1 - p)) / n + z * z / (4 * n * n))
    scale = 1 + z * z / n
    low = 0.0 if p <= 0.0 else max(0.0, (centre - half) / scale)
    high = 1.0 if p >= 1.0 else min(1.0, (centre + half) / scale)
    return (low, high)


def near_bound(p: float, n: int) -> bool:
    """True when fewer than five of ``n`` are "successes" or "failures" (n·p < 5)."""
    return min(n * p, n * (1 - p)) < 5


def estimate(values: Sequence[float], bounded: bool = True, alpha: float = ALPHA) -> Estimate:
    """Mean, standard error (sample sd / sqrt(n)) and 95% interval of independent values.

    ``bounded``: the values lie in [0, 1] (scores, rates), so Wilson's interval is used
    near the bounds; otherwise the t interval always (an unknown one when n < 2).
    """
    n = len(values)
    if n == 0:
        return Estimate(None, None, 0)
    m = sum(values) / n
    var = sample_var(values)
    se = None if var is None else math.sqrt(var / n)
    if bounded and (se is None or near_bound(m, n)):
        low, high = wilson(min(1.0, max(0.0, m)), n, alpha)
        return Estimate(m, se, n, low, high, "wilson")
    if se is None:
        return Estimate(m, None, n)
    q = t_quantile(1 - alpha / 2, n - 1)
    return Estimate(m, se, n, m - q * se, m + q * se, "t")


def scenario_means(clusters: Mapping[str, Sequence[float]]) -> dict[str, float]:
    """Each scenario's mean over its trials (scenarios with no trial left out)."""
    return {name: sum(v) / len(v) for name, v in clusters.items() if v}


def clustered(clusters: Mapping[str, Sequence[float]], alpha: float = ALPHA) -> Estimate:
    """The mean over scenarios of the per-scenario mean, with the scenario-clustered
    standard error: repeated trials never count as independent samples."""
    return estimate(list(scenario_means(clusters).values()), alpha=alpha)


def _pass_at(n: int, c: int, k: int) -> float:
    """Chen et al.'s unbiased pass@k for one scenario: 1 - C(n-c, k) / C(n, k)."""
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def _pass_all(n: int, c: int, k: int) -> float:
    """tau-bench's pass^k for one scenario: C(c, k) / C(n, k), all k of k succeed."""
    return math.comb(c, k) / math.comb(n, k)


def pass_at_k(counts: Sequence[tuple[int, int]], k: int) -> float | None:
    """Mean over scenarios of unbiased pass@k; ``counts`` holds (trials, successes).

    Scenarios with fewer than k trials are left out; None when none has k.
    """
    usable = [(n, c) for n, c in counts if n >= k >= 1]
    return mean([_pass_at(n, c, k) for n, c in usable])


def pass_hat_k(counts: Sequence[tuple[int, int]], k: int) -> float | None:
    """Mean over scenarios of pass^k (every one of k trials succeeds)."""
    usable = [(n, c) for n, c in counts if n >= k >= 1]
    return mean([_pass_all(n, c, k) for n, c in usable])


def flip_rate(clusters: Mapping[str, Sequence[float]]) -> float | None:
    """Share of scenarios with several trials whose outcomes disagree (0 < s_t < 1)."""
    repeated = [v for v in clusters.values() if len(v) > 1]
    return mean([1.0 if 0.0 < sum(v) / len(v) < 1.0 else 0.0 for v in repeated])


def mde(se_diff: float, alpha: float = ALPHA, power: float = POWER) -> float:
    """Minimum detectable difference: (z_{1-alpha/2} + z_{power}) · SE of the difference
    (2.80 · SE at alpha 0.05 and 80% power)."""
    return (z_quantile(1 - alpha / 2) + z_quantile(power)) * se_diff


def pareto_front(points: Sequence[tuple[float, float]]) -> list[int]:
    """Indices of points not dominated when lower x (cost, time) and higher y (score)
    are better; returned in increasing x. Duplicate points are all kept."""
    front = []
    for i, (x, y) in enumerate(points):
        dominated = any(
            (ox <= x and oy >= y) and (ox < x or oy > y)
            for j, (ox, oy) in enumerate(points)
            if j != i
        )
        if not dominated:
            front.append(i)
    return sorted(front, key=lambda i: (points[i][0], -points[i][1]))
