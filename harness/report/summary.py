"""Aggregate runs per scorer era, then per entrant (agent, agent version, model).

Eras are never mixed: each gets its own table. Trials of one scenario are a cluster:
every figure is the mean over scenarios of the per-scenario mean. Infrastructure errors
are counted in their own column and shown both ways: left out (the agent is never
charged for the harness; ranks use this) and counted as zeros (comparable with other
harnesses). Entrants are ranked by paired tests on the scenarios each pair shares,
Holm-corrected over the pairs (``paired.rank``); every table carries the minimum
difference it can detect at 80% power.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from harness.fleet.calltimes import engine_axis
from harness.report.collect import RunResult
from harness.report.paired import PLANNING_VAR_D, Paired, compare, rank, smallest_p, varies
from harness.report.stats import (
    ALPHA,
    NOT_MEASURABLE,
    TOO_FEW,
    Estimate,
    clustered,
    flip_rate,
    mde,
    mean,
    pass_at_k,
    pass_hat_k,
)
from harness.report.versions import table_keys

Clusters = dict[str, list[float]]


@dataclass
class EntrantSummary:
    agent: str
    agent_version: str
    model: str
    scenarios: int
    runs: int  # runs the agent is accountable for (infra errors excluded)
    infra_errors: int
    success: Estimate  # errors excluded, clustered by scenario
    score: Estimate  # errors excluded, clustered by scenario
    partial: float | None
    cost_usd: float | None
    energy_kwh: float | None
    wall_s: float | None
    prompt_tokens: float | None
    cached_tokens: float | None
    completion_tokens: float | None
    success_as_zero: Estimate = field(default_factory=lambda: Estimate(None, None, 0))
    score_as_zero: Estimate = field(default_factory=lambda: Estimate(None, None, 0))
    trials: int = 1  # k: the fewest trials any of its scenarios had
    pass_at_k: float | None = None  # only when k >= 2
    pass_hat_k: float | None = None
    flip_rate: float | None = None
    ttft_s: float | None = None  # mean time to first token of its trials (engine telemetry)
    decode_tps: float | None = None  # mean decode rate of its trials, tokens/s
    engine: str = "-"  # engine and quantisation from the fleet fingerprint (an axis)
    budget_hits: int = 0  # runs stopped by the trial's budget (harden, #16)
    limit_hits: int = 0  # runs stopped by a sandbox limit (disk, memory, pids, output)
    failovers: int = 0  # runs whose model calls failed on one host and moved to another
    failover_runs: list[str] = field(default_factory=list)  # their run ids (a few)
    rank: int = 0
    vs_above: str = ""  # "", NOT_MEASURABLE, "below" or TOO_FEW (shown apart, rank 0)
    vs_above_detail: str = ""  # the paired test against the entrant just above
    vs_above_p: float | None = None  # its Holm-adjusted p
    better: list[str] = field(default_factory=list)  # labels separably better
    run_ids: list[str] = field(default_factory=list)
    clusters: Clusters = field(default_factory=dict)  # scores by scenario, errors excluded
    clusters_zero: Clusters = field(default_factory=dict)  # errors as zeros

    @property
    def label(self) -> str:
        return f"{self.agent} {self.agent_version} + {self.model}"

    @property
    def success_rate(self) -> float | None:
        return self.success.mean

    def as_dict(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "agent": self.agent,
            "agent_version": self.agent_version,
            "model": self.model,
            "scenarios": self.scenarios,
            "runs": self.runs,
            "infra_errors": self.infra_errors,
            "success_rate": self.success.mean,
            "success_low": self.success.low,
            "success_high": self.success.high,
            "success_rate_errors_as_zero": self.success_as_zero.mean,
            "score_mean": self.score.mean,
            "score_se": self.score.se,
            "score_low": self.score.low,
            "score_high": self.score.high,
            "score_interval": self.score.method,
            "score_errors_as_zero": self.score_as_zero.mean,
            "trials": self.trials,
            "pass_at_k": self.pass_at_k,
            "pass_hat_k": self.pass_hat_k,
            "flip_rate": self.flip_rate,
            "partial_score": self.partial,
            "cost_usd": self.cost_usd,
            "energy_kwh": self.energy_kwh,
            "wall_s": self.wall_s,
            "prompt_tokens": self.prompt_tokens,
            "cached_tokens": self.cached_tokens,
            "completion_tokens": self.completion_tokens,
            "ttft_s": self.ttft_s,
            "decode_tps": self.decode_tps,
            "engine": self.engine,
            "budget_hits": self.budget_hits,
            "limit_hits": self.limit_hits,
            "failovers": self.failovers,
            "vs_above": self.vs_above,
            "vs_above_detail": self.vs_above_detail,
            "separably_better": self.better,
        }


@dataclass
class EraTable:
    era: str
    entrants: list[EntrantSummary]  # in ranked order
    shared: int = 0  # scenarios every entrant ran
    union: int = 0  # scenarios any entrant ran
    mde: float | None = None  # minimum detectable paired difference, 80% power
    mde_t: int = 0  # the scenario count the MDE is for
    mde_source: str = ""
    pairs: dict[tuple[int, int], Paired] = field(default_factory=dict)  # ranked positions
    holm_p: dict[tuple[int, int], float] = field(default_factory=dict)
    family: int = 0  # pairs in Holm's family (those enough shared scenarios could separate)
    runs: list[RunResult] = field(default_factory=list)  # the era's runs (goagentbench's CSV)

    @property
    def same_sets(self) -> bool:
        return self.shared == self.union

    def notes(self, detail: bool = False) -> list[str]:
        """What a reader must know to read the table, one line each; ``detail`` adds the
        paired test behind each "vs above"."""
        out = []
        if self.entrants and not self.same_sets:
            out.append(
                f"entrants ran different scenario sets ({self.shared} of {self.union} shared "
                "by all): each pair is compared only on the scenarios both ran"
            )
        if self.mde is not None:
            out.append(
                f"minimum detectable difference (80% power, alpha 0.05, paired, "
                f"T={self.mde_t}): {self.mde:.3f} ({self.mde_source})"
            )
        elif self.mde_source:
            out.append(f"minimum detectable difference: none ({self.mde_source})")
        if len(self.entrants) > 1:
            out.append(
                "ranks: shared unless a paired test (McNemar or bootstrap over scenarios) "
                f"separates them, Holm-corrected over {self.family} pair(s) "
                "(pairs too small to ever separate stay out of the family)"
            )
        apart = [e.label for e in self.entrants if e.vs_above == TOO_FEW]
        if apart:
            out.append(
                f"shown apart, unranked ({TOO_FEW}): {', '.join(apart)}: no paired test "
                "could separate them from any other entrant (6 shared scenarios needed)"
            )
        for e in self.entrants:
            if e.failovers:
                some = ", ".join(e.failover_runs[:3]) + (", ..." if e.failovers > 3 else "")
                out.append(
                    f"{e.label}: {e.failovers} run(s) failed over to another model host "
                    f"({some}; `harness view RUN` shows which call)"
                )
        if detail:
            out += [f"{e.label} {e.vs_above_detail}" for e in self.entrants if e.vs_above_detail]
        return out


def _trial_score(r: RunResult) -> float:
    if r.score is not None:
        return r.score
    return 1.0 if r.outcome == "success" else 0.0


def _clusters(runs: list[RunResult], zero_errors: bool) -> tuple[Clusters, Clusters]:
    scores: Clusters = defaultdict(list)
    wins: Clusters = defaultdict(list)
    for r in runs:
        if r.infra_error and not zero_errors:
            continue
        scores[r.scenario].append(0.0 if r.infra_error else _trial_score(r))
        wins[r.scenario].append(1.0 if r.outcome == "success" else 0.0)
    return dict(scores), dict(wins)


def _known(values: list[float | None]) -> float | None:
    return mean([v for v in values if v is not None])


def failed_over(r: RunResult) -> bool:
    """Whether the run's model calls failed on one host and went on to another (its
    usage names several hosts and some attempt failed)."""
    hosts = r.usage.get("hosts")
    failed = r.usage.get("failed_attempts")
    return isinstance(hosts, dict) and len(hosts) > 1 and isinstance(failed, int) and failed > 0


def summarise_entrant(runs: list[RunResult]) -> EntrantSummary:
    """Statistics of one entrant's runs within one era."""
    first = runs[0]
    graded = [r for r in runs if not r.infra_error]
    moved = [r.run_id for r in runs if failed_over(r)]
    scores, wins = _clusters(runs, zero_errors=False)
    scores_zero, wins_zero = _clusters(runs, zero_errors=True)
    k = min((len(v) for v in wins.values()), default=0)
    counts = [(len(v), int(sum(v))) for v in wins.values()]
    return EntrantSummary(
        agent=first.agent,
        agent_version=first.agent_version,
        model=first.model,
        scenarios=len({r.scenario for r in runs}),
        runs=len(graded),
        infra_errors=len(runs) - len(graded),
        success=clustered(wins),
        score=clustered(scores),
        success_as_zero=clustered(wins_zero),
        score_as_zero=clustered(scores_zero),
        trials=max(k, 1),
        pass_at_k=pass_at_k(counts, k) if k >= 2 else None,
        pass_hat_k=pass_hat_k(counts, k) if k >= 2 else None,
        flip_rate=flip_rate(wins),
        partial=_known([r.partial_score for r in graded]),
        cost_usd=_known([r.usage_value("cost_usd") for r in graded]),
        energy_kwh=_known([r.usage_value("energy_kwh") for r in graded]),
        wall_s=_known([r.wall_s for r in graded]),
        prompt_tokens=_known([r.usage_value("prompt_tokens") for r in graded]),
        cached_tokens=_known([r.usage_value("cached_tokens") for r in graded]),
        completion_tokens=_known([r.usage_value("completion_tokens") for r in graded]),
        ttft_s=_known([r.usage_value("ttft_s") for r in graded]),
        decode_tps=_known([r.usage_value("decode_tps") for r in graded]),
        engine=" | ".join(sorted({engine_axis(r.meta) for r in runs})),
        budget_hits=sum(1 for r in graded if r.report.get("reason") == "budget"),
        limit_hits=sum(1 for r in graded if str(r.report.get("reason", "")).startswith("limit")),
        failovers=len(moved),
        failover_runs=moved,
        run_ids=[r.run_id for r in runs],
        clusters=scores,
        clusters_zero=scores_zero,
    )


def pair_detail(p: Paired, p_adj: float | None = None) -> str:
    """One line for a paired test: shared count, difference, interval and p."""
    if p.method == "none" or p.diff is None:
        return "no shared scenario"
    ci = "" if p.low is None or p.high is None else f" [{p.low:+.3f}, {p.high:+.3f}]"
    test = f"McNemar b={p.b} c={p.c} p={p.p:.3g}" if p.method == "mcnemar" else f"p={p.p:.3g}"
    holm_text = "" if p_adj is None else f", Holm p={p_adj:.3g}"
    return f"{p.t} shared, diff {p.diff:+.3f}{ci}, {test}{holm_text}"


def detectable(pairs: Iterable[Paired], t: int) -> tuple[float | None, str]:
    """The minimum detectable paired difference on ``t`` scenarios and where its variance
    came from: the median non-zero variance of the ``pairs``' differences, else the
    planning value; None when no exact paired test can separate on ``t`` scenarios.
    ``report`` (a table's pairs) and ``compare`` (one pair) both ask this."""
    if smallest_p(t) > ALPHA:
        return None, f"no exact paired test reaches p < 0.05 on {t} scenario(s); 6 needed"
    var_ds = [p.var_d for p in pairs if varies(p.var_d) and p.t >= 2]
    if var_ds:
        var_d, source = statistics.median(var_ds), "median variance of paired differences"
    else:
        var_d, source = PLANNING_VAR_D, "planning variance 0.25: no pair whose difference varies"
    return mde(math.sqrt(var_d / t)), source


def _table_mde(table: EraTable, entrants: list[EntrantSummary]) -> None:
    """The MDE at the table's size: T = scenarios shared by all (else the largest pair),
    with the median non-zero variance of paired differences (else the planning value)."""
    names = [set(e.clusters) for e in entrants]
    union = set().union(*names) if names else set()
    shared = set.intersection(*names) if names else set()
    table.shared, table.union = len(shared), len(union)
    sizes = [p.t for p in table.pairs.values()]
    t = len(shared) if len(entrants) < 2 or len(shared) >= 2 else max(sizes, default=0)
    table.mde, table.mde_source = detectable(table.pairs.values(), t)
    table.mde_t = t


def rank_table(era: str, entrants: list[EntrantSummary]) -> EraTable:
    """Order entrants by Holm-corrected paired tests and fill rank and ``vs_above``."""
    pairs = {
        (i, j): compare(entrants[i].clusters, entrants[j].clusters, quick=True)
        for i in range(len(entrants))
        for j in range(i + 1, len(entrants))
    }
    placings, adjusted = rank([e.score.mean for e in entrants], pairs)
    # An entrant that no paired test could place against anyone (too few scenarios
    # shared with every other, while some pair of the table is testable) is shown apart,
    # after the ranked ones: a mean over one run is not a first place.
    testable = [k for k, p in pairs.items() if smallest_p(p.t) <= ALPHA]
    apart = {i for i in range(len(entrants)) if testable and not any(i in k for k in testable)}
    placings = [p for p in placings if p.index not in apart] + [
        p for p in placings if p.index in apart
    ]
    order = [p.index for p in placings]
    pos = {idx: n for n, idx in enumerate(order)}
    table = EraTable(era, [entrants[i] for i in order])
    for (i, j), p in pairs.items():
        a, b = pos[i], pos[j]
        flipped = p if a < b else _flip(p)
        table.pairs[(min(a, b), max(a, b))] = flipped
        table.holm_p[(min(a, b), max(a, b))] = adjusted[(i, j)]
    for n, (placing, e) in enumerate(zip(placings, table.entrants, strict=True)):
        e.rank, e.better = placing.rank, [entrants[i].label for i in placing.better]
        e.vs_above, e.vs_above_detail = "", ""
        if placing.index in apart:
            e.rank, e.vs_above = 0, TOO_FEW
            continue
        if n == 0:
            continue
        tied = table.entrants[n - 1].rank == e.rank
        e.vs_above = NOT_MEASURABLE if tied else "below"
        # Tied: the entrant above that came closest to separating (smallest Holm p);
        # below: the one just above, whose test did separate or whose rank is better.
        m = min(range(n), key=lambda a: (table.holm_p[(a, n)], a)) if tied else n - 1
        if table.pairs[(m, n)].low is None and table.pairs[(m, n)].t:  # shown: in full
            full = compare(table.entrants[m].clusters, e.clusters)
            table.pairs[(m, n)] = replace(full, p=max(full.p, table.pairs[(m, n)].p))
        # this entrant minus the one above, as the line reads ("B vs A: diff" is B - A)
        e.vs_above_detail = f"vs {table.entrants[m].label}: " + pair_detail(
            _flip(table.pairs[(m, n)]), table.holm_p[(m, n)]
        )
        e.vs_above_p = table.holm_p[(m, n)]
    table.family = sum(1 for p in pairs.values() if smallest_p(p.t) <= ALPHA)
    _table_mde(table, entrants)
    return table


def _flip(p: Paired) -> Paired:
    """B minus A from A minus B."""

    def neg(x: float | None) -> float | None:
        return None if x is None else -x

    return Paired(
        p.t, neg(p.diff), p.se, p.unpaired_se, neg(p.high), neg(p.low), p.p, p.method,
        p.correlation, p.var_d, p.c, p.b,
    )  # fmt: skip


def entrant_groups(runs: list[RunResult]) -> dict[str, dict[tuple[str, str, str], list[RunResult]]]:
    """Runs by table (era, split by scenario version) and entrant."""
    by_era: dict[str, dict[tuple[str, str, str], list[RunResult]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for r, table in zip(runs, table_keys(runs), strict=True):  # one version per scenario
        by_era[table][r.entrant].append(r)
    return by_era


def summarise(runs: list[RunResult]) -> list[EraTable]:
    """One ranked table per era, eras in name order.

    Entrants enter the ranking in entrant order, so ties read the same whatever order
    the runs came in (a job on a cluster finishes its trials in another order)."""
    by_era = entrant_groups(runs)
    tables = []
    for era in sorted(by_era):
        table = rank_table(era, [summarise_entrant(by_era[era][k]) for k in sorted(by_era[era])])
        table.runs = [r for k in sorted(by_era[era]) for r in by_era[era][k]]
        tables.append(table)
    return tables
