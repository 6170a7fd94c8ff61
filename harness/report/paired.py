"""Paired comparisons of entrants on the scenarios both ran, Holm-corrected ranks, and
power planning. Pure functions, no I/O.

Scenario difficulty is shared, so the paired difference d_t = s_A,t - s_B,t has a far
smaller spread than two independent means: the paired standard error is sd(d)/sqrt(T).
One binary trial each on every shared scenario: exact McNemar on the discordant pairs.
Otherwise (graded scores, or several trials): a paired bootstrap that resamples whole
scenarios with a fixed seed, so the same results always give the same answer.
Entrants share a rank unless the Holm-corrected test over every pair separates them: an
entrant's rank is 1 + the number of entrants separably better than it, so an entrant
that cannot be told from anyone (one run, no shared scenarios) never moves the others.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypeGuard

from harness.report.dist import binom_cdf_half, z_quantile
from harness.report.stats import ALPHA, POWER, sample_var

BOOTSTRAP_B = 10_000
BOOTSTRAP_SEED = 20_251_201
MIN_SCENARIOS = 6  # 2 / 2^6 < 0.05: the fewest on which an exact paired test can separate
VAR_EPS = 1e-12  # below this, paired differences do not vary (float dust of equal means)
PLANNING_VAR_D = 0.25  # binary outcomes at p = 0.5 with correlation 0.5: 2·0.25·(1-0.5)


@dataclass(frozen=True)
class Paired:
    """A minus B on the ``t`` scenarios both ran."""

    t: int
    diff: float | None
    se: float | None  # paired: sd(d) / sqrt(T)
    unpaired_se: float | None  # sqrt(SE_A² + SE_B²), for contrast only
    low: float | None
    high: float | None
    p: float  # two-sided p-value of "no difference"
    method: str  # "mcnemar", "bootstrap" or "none"
    correlation: float | None
    var_d: float | None
    b: int = 0  # scenarios A did better on (McNemar: A passed, B failed)
    c: int = 0  # scenarios B did better on


def varies(var_d: float | None) -> TypeGuard[float]:
    """A variance of paired differences that is really there (not 0, nor float dust)."""
    return var_d is not None and var_d > VAR_EPS


def mcnemar_exact(b: int, c: int) -> float:
    """Exact two-sided McNemar p: min(1, 2·P(X <= min(b, c))), X ~ Bin(b + c, 1/2)."""
    if b + c == 0:
        return 1.0
    return min(1.0, 2.0 * binom_cdf_half(min(b, c), b + c))


def correlation(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Pearson's r; None when fewer than two pairs or either side does not vary."""
    n = len(xs)
    if n < 2:
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    if sxx == 0 or syy == 0:
        return None
    return sxy / math.sqrt(sxx * syy)


def bootstrap(
    diffs: Sequence[float],
    alpha: float = ALPHA,
    b: int = BOOTSTRAP_B,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float, float]:
    """Percentile interval and two-sided p of the mean of ``diffs`` by resampling whole
    scenarios ``b`` times with a fixed seed; p = 2·min(share <= 0, share >= 0), with
    exact zeros counted half to each side."""
    rng = random.Random(seed)
    t = len(diffs)
    draws = iter(rng.choices(diffs, k=t * b))  # one call: same draws, half the time
    stats = sorted(sum(sample) / t for sample in zip(*[draws] * t, strict=True))
    below = sum(1 for s in stats if s < 0)
    zero = sum(1 for s in stats if s == 0)
    share_le = (below + 0.5 * zero) / b
    p = min(1.0, 2.0 * min(share_le, 1.0 - share_le))
    lo_i = max(0, math.floor(alpha / 2 * b))
    hi_i = min(b - 1, math.ceil((1 - alpha / 2) * b) - 1)
    return stats[lo_i], stats[hi_i], p


def _binary(values: Sequence[float]) -> bool:
    return all(v in (0.0, 1.0) for v in values)


def compare(
    a: Mapping[str, Sequence[float]],
    b: Mapping[str, Sequence[float]],
    alpha: float = ALPHA,
    boot_b: int = BOOTSTRAP_B,
    quick: bool = False,
) -> Paired:
    """Paired comparison of two entrants' trials, by scenario, on the shared scenarios.

    The interval is the paired bootstrap's. The p-value is exact McNemar when each
    side has one binary trial per scenario; for graded scores it is the larger of the
    bootstrap's and the exact sign test's (the same binomial on scenarios won and lost),
    because the percentile bootstrap is far too narrow with a handful of scenarios.
    ``quick`` (for ranking many pairs) skips the bootstrap where it cannot change the
    decision: McNemar's p needs none, and a sign test above alpha already says "not
    separable"; ``low``/``high`` are then None.
    """
    shared = sorted(k for k in a.keys() & b.keys() if a[k] and b[k])
    sa = [sum(a[k]) / len(a[k]) for k in shared]
    sb = [sum(b[k]) / len(b[k]) for k in shared]
    t = len(shared)
    if t == 0:
        return Paired(0, None, None, None, None, None, 1.0, "none", None, None)
    d = [x - y for x, y in zip(sa, sb, strict=True)]
    diff = sum(d) / t
    var_d = sample_var(d)
    se = None if var_d is None else math.sqrt(var_d / t)
    va, vb = sample_var(sa), sample_var(sb)
    unpaired = None if va is None or vb is None else math.sqrt(va / t + vb / t)
    rho = correlation(sa, sb)
    wins, losses = sum(1 for x in d if x > 0), sum(1 for x in d if x < 0)
    p_sign = mcnemar_exact(wins, losses)
    one_each = all(len(a[k]) == 1 and len(b[k]) == 1 for k in shared)
    binary = one_each and _binary(sa) and _binary(sb)
    method = "mcnemar" if binary else "bootstrap"
    if quick and (binary or p_sign > alpha):
        return Paired(t, diff, se, unpaired, None, None, p_sign, method, rho, var_d, wins, losses)
    low, high, p_boot = bootstrap(d, alpha, boot_b)
    if binary:
        return Paired(t, diff, se, unpaired, low, high, p_sign, method, rho, var_d, wins, losses)
    p = max(p_boot, p_sign)
    return Paired(t, diff, se, unpaired, low, high, p, "bootstrap", rho, var_d, wins, losses)


def smallest_p(t: int) -> float:
    """The smallest p an exact paired test can reach on ``t`` scenarios: 2 / 2^t."""
    return min(1.0, 2.0 * 0.5**t)


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in input order: a pair is separable at alpha
    when its adjusted p is at most alpha (family-wise error held at alpha)."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    adjusted = [1.0] * m
    running = 0.0
    for pos, i in enumerate(order):
        running = max(running, min(1.0, (m - pos) * pvalues[i]))
        adjusted[i] = running
    return adjusted


@dataclass(frozen=True)
class Placing:
    """An entrant's place: ``rank`` = 1 + entrants separably better (Holm, alpha)."""

    index: int  # position in the input
    rank: int
    better: tuple[int, ...]  # input indices of the entrants separably better


def rank(
    means: Sequence[float | None],
    pairs: Mapping[tuple[int, int], Paired],
    alpha: float = ALPHA,
) -> tuple[list[Placing], dict[tuple[int, int], float]]:
    """Ranks from paired tests; ``pairs[(i, j)]`` is i minus j for i < j.

    Returns placings ordered by (rank, mean, input order) and the Holm-adjusted p of
    each pair. Pairs with no shared scenario are never separable.
    """
    # Pairs that no result could separate (too few shared scenarios: an entrant with one
    # run) stay out of Holm's family, so they never make the others' tests stricter.
    keys = sorted(k for k in pairs if smallest_p(pairs[k].t) <= alpha)
    adjusted = {k: pr.p for k, pr in pairs.items()}  # out of the family: p >= alpha anyway
    adjusted.update(zip(keys, holm([pairs[k].p for k in keys]), strict=True))
    better: dict[int, list[int]] = {i: [] for i in range(len(means))}
    for (i, j), p_adj in adjusted.items():
        pr = pairs[(i, j)]
        if pr.diff is None or pr.method == "none" or p_adj > alpha or pr.diff == 0:
            continue
        if pr.diff > 0:
            better[j].append(i)
        else:
            better[i].append(j)
    placings = [Placing(i, 1 + len(better[i]), tuple(sorted(better[i]))) for i in better]
    placings.sort(key=lambda p: (p.rank, means[p.index] is None, -(means[p.index] or 0.0), p.index))
    return placings, adjusted


@dataclass(frozen=True)
class Plan:
    """Scenarios needed to detect ``delta`` at 80% power for each trial count."""

    delta: float
    between: float  # omega²: variance over scenarios of the true paired differences
    within: float | None  # sigma_A² + sigma_B²: trial-to-trial variance (None: unknown)
    needed: dict[int, int]  # trials per scenario -> scenarios
    source: str  # where the variances come from


def scenarios_needed(
    delta: float, between: float, within: float, trials: int, alpha: float = ALPHA
) -> int:
    """Miller: T = (z_{1-alpha/2} + z_{power})² · (omega² + within / K) / delta²."""
    z = z_quantile(1 - alpha / 2) + z_quantile(POWER)
    need = math.ceil(z * z * (between + within / trials) / (delta * delta))
    return max(MIN_SCENARIOS, need)  # fewer and no exact paired test reaches alpha 0.05


def plan(
    delta: float,
    var_d: float | None,
    within: float | None,
    trials_seen: int,
    ks: Sequence[int] = (1, 3, 5),
) -> Plan:
    """A plan from observed variances: ``var_d`` is the variance of paired differences
    of scenario means seen with ``trials_seen`` trials, ``within`` the summed trial
    variance of the two entrants (None when no scenario had repeated trials)."""
    if not var_d:
        source = "planning default: binary scores at p = 0.5, correlation 0.5"
        var_d, within, trials_seen = PLANNING_VAR_D, None, 1
    else:
        source = "variances observed in these results"
    if within is None:
        between, w = var_d, 0.0  # all of it treated as between scenarios: trials won't help
    else:
        between, w = max(0.0, var_d - within / trials_seen), within
    needed = {k: scenarios_needed(delta, between, w, k) for k in ks}
    return Plan(delta, between, within, needed, source)
