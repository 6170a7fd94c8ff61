"""Honest statistics, pure and without I/O: means, standard errors, and rankings that
refuse to call a difference inside the error bars a win.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

NOT_MEASURABLE = "not measurable"


@dataclass(frozen=True)
class Estimate:
    """A sample mean with its standard error (None when n < 2: unknown, not zero)."""

    mean: float | None
    se: float | None
    n: int


def mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def estimate(values: Sequence[float]) -> Estimate:
    """Mean and standard error of the mean (sample standard deviation / sqrt(n))."""
    n = len(values)
    if n == 0:
        return Estimate(None, None, 0)
    m = sum(values) / n
    if n < 2:
        return Estimate(m, None, 1)
    var = sum((v - m) ** 2 for v in values) / (n - 1)
    return Estimate(m, math.sqrt(var) / math.sqrt(n), n)


def measurable(a: Estimate, b: Estimate) -> bool:
    """True when ``a`` and ``b`` differ by more than their combined standard error.

    An unknown standard error (one run) makes every difference unmeasurable: one sample
    cannot tell skill from luck.
    """
    if a.mean is None or b.mean is None or a.se is None or b.se is None:
        return False
    return abs(a.mean - b.mean) > math.sqrt(a.se**2 + b.se**2)


@dataclass(frozen=True)
class Placing:
    """An entrant's place: ``rank`` is shared with the one above when not measurable."""

    index: int  # position in the input
    rank: int
    vs_above: str  # "" for the first, NOT_MEASURABLE, or "below"


def rank(estimates: Sequence[Estimate]) -> list[Placing]:
    """Order by mean (unknown last); each entrant is compared with the one just above.

    Returns placings in ranked order. Entrants whose difference from the one above is
    not measurable share its rank, so the table never claims a win the data cannot carry.
    """
    order = sorted(
        range(len(estimates)),
        key=lambda i: (estimates[i].mean is None, -(estimates[i].mean or 0.0)),
    )
    out: list[Placing] = []
    for pos, idx in enumerate(order):
        if pos == 0:
            out.append(Placing(idx, 1, ""))
            continue
        above = out[-1]
        if measurable(estimates[above.index], estimates[idx]):
            out.append(Placing(idx, pos + 1, "below"))
        else:
            out.append(Placing(idx, above.rank, NOT_MEASURABLE))
    return out


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
