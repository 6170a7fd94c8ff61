"""Aggregate runs per scorer era, then per entrant (agent, agent version, model).

Eras are never mixed: each gets its own table. Infrastructure errors are counted in
their own column and left out of every agent statistic. Within an era entrants are
ranked by mean score, and a difference inside the combined standard error is shown as
"not measurable" instead of a win.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from harness.report.collect import RunResult
from harness.report.stats import Estimate, Placing, estimate, mean, rank
from harness.report.versions import table_keys


@dataclass
class EntrantSummary:
    agent: str
    agent_version: str
    model: str
    scenarios: int
    runs: int  # runs the agent is accountable for (infra errors excluded)
    infra_errors: int
    success_rate: float | None
    score: Estimate
    partial: float | None
    cost_usd: float | None
    energy_kwh: float | None
    wall_s: float | None
    prompt_tokens: float | None
    cached_tokens: float | None
    completion_tokens: float | None
    budget_hits: int = 0  # runs stopped by the trial's budget (harden, #16)
    limit_hits: int = 0  # runs stopped by a sandbox limit (disk, memory, pids, output)
    rank: int = 0
    vs_above: str = ""
    run_ids: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.agent} {self.agent_version} + {self.model}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "agent": self.agent,
            "agent_version": self.agent_version,
            "model": self.model,
            "scenarios": self.scenarios,
            "runs": self.runs,
            "infra_errors": self.infra_errors,
            "success_rate": self.success_rate,
            "score_mean": self.score.mean,
            "score_se": self.score.se,
            "partial_score": self.partial,
            "cost_usd": self.cost_usd,
            "energy_kwh": self.energy_kwh,
            "wall_s": self.wall_s,
            "prompt_tokens": self.prompt_tokens,
            "cached_tokens": self.cached_tokens,
            "completion_tokens": self.completion_tokens,
            "budget_hits": self.budget_hits,
            "limit_hits": self.limit_hits,
            "vs_above": self.vs_above,
        }


@dataclass
class EraTable:
    era: str
    entrants: list[EntrantSummary]  # in ranked order


def _known(values: list[float | None]) -> float | None:
    return mean([v for v in values if v is not None])


def summarise_entrant(runs: list[RunResult]) -> EntrantSummary:
    """Statistics of one entrant's runs within one era."""
    first = runs[0]
    graded = [r for r in runs if not r.infra_error]
    return EntrantSummary(
        agent=first.agent,
        agent_version=first.agent_version,
        model=first.model,
        scenarios=len({r.scenario for r in runs}),
        runs=len(graded),
        infra_errors=len(runs) - len(graded),
        success_rate=mean([1.0 if r.outcome == "success" else 0.0 for r in graded]),
        score=estimate([r.score for r in graded if r.score is not None]),
        partial=_known([r.partial_score for r in graded]),
        cost_usd=_known([r.usage_value("cost_usd") for r in graded]),
        energy_kwh=_known([r.usage_value("energy_kwh") for r in graded]),
        wall_s=_known([r.wall_s for r in graded]),
        prompt_tokens=_known([r.usage_value("prompt_tokens") for r in graded]),
        cached_tokens=_known([r.usage_value("cached_tokens") for r in graded]),
        completion_tokens=_known([r.usage_value("completion_tokens") for r in graded]),
        budget_hits=sum(1 for r in graded if r.report.get("reason") == "budget"),
        limit_hits=sum(1 for r in graded if str(r.report.get("reason", "")).startswith("limit")),
        run_ids=[r.run_id for r in runs],
    )


def summarise(runs: list[RunResult]) -> list[EraTable]:
    """One ranked table per era, eras in name order."""
    by_era: dict[str, dict[tuple[str, str, str], list[RunResult]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for r, table in zip(runs, table_keys(runs), strict=True):  # one version per scenario
        by_era[table][r.entrant].append(r)
    tables = []
    for era in sorted(by_era):
        entrants = [summarise_entrant(group) for group in by_era[era].values()]
        placings: list[Placing] = rank([e.score for e in entrants])
        ordered = []
        for p in placings:
            entrant = entrants[p.index]
            entrant.rank, entrant.vs_above = p.rank, p.vs_above
            ordered.append(entrant)
        tables.append(EraTable(era, ordered))
    return tables
