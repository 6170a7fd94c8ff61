"""Read result folders into ``RunResult`` records, with the filters ``report`` offers.

Only runs with a final ``verify/report.json`` count; interrupted runs (no report) are
skipped. Smoke scenarios are always excluded. Usage keys the gateway did not record
stay ``None``: unknown is not zero. The filters follow goagentbench's report: name
filters, then the newest agent version per agent and model (or every version, merged
into one row, with ``--all-agent-versions``), then the newest ``limit`` runs per
scenario, agent and model; harness adds ``--job`` and ``--tasks-after``.
"""

from __future__ import annotations

import fnmatch
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from harness.report.taskdate import task_dates
from harness.results.index import indexed_runs, read_parts, read_report

NO_ERA = "(no era)"
SEMVER = re.compile(r"v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?")
USAGE_KEYS = (
    "calls",
    "prompt_tokens",
    "cached_tokens",
    "completion_tokens",
    "cost_usd",
    "energy_kwh",
    "wall_s",
)


@dataclass(slots=True)  # slots: 100,000 of them are held at once by a board
class RunResult:
    run_dir: Path
    run_id: str
    scenario: str
    era: str
    agent: str
    agent_version: str
    model: str
    outcome: str
    score: float | None
    partial_score: float | None
    started_at: str
    wall_s: float | None
    usage: dict[str, Any] = field(default_factory=dict)
    phases: list[dict[str, Any]] = field(default_factory=list)
    report: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    trimmed: bool = False  # report holds the summary's keys only (from the run index)
    signature: str = ""  # the stat signature of its three files the run index checked

    def full(self) -> RunResult:
        """This run with its whole report (read again when the index trimmed it)."""
        if not self.trimmed:
            return self
        report = read_report(self.run_dir)  # run.json and progress are whole in the index
        if report is None:
            return self
        # the trimmed report holds every key a field is drawn from: only the report
        # changes (era and agent version stay as filled in and merged)
        return replace(self, report=report, trimmed=False)

    @property
    def entrant(self) -> tuple[str, str, str]:
        return (self.agent, self.agent_version, self.model)

    @property
    def infra_error(self) -> bool:
        return self.outcome == "error"

    def usage_value(self, key: str) -> float | None:
        value = self.usage.get(key)
        return float(value) if isinstance(value, int | float) else None


@dataclass(frozen=True)
class Filters:
    scenarios: list[str] = field(default_factory=list)  # names or fnmatch globs
    agents: list[str] = field(default_factory=list)
    models: list[str] = field(default_factory=list)
    after: str | None = None  # ISO date or timestamp; runs started at or after it
    limit: int | None = None  # most recent N runs per scenario, agent and model
    job: str | None = None  # only runs of this job (run.json ``job``)
    versions: str = "each"  # "each" (one entrant per version), "newest" or "merge"
    tasks_after: str | None = None  # ISO date: only scenarios whose task date is after it
    scenario_root: Path | None = None  # where task dates are read from


def _wall(usage: dict[str, Any], phases: list[dict[str, Any]]) -> float | None:
    """The agent's wall time: its phase's duration (what a user waits for the change).

    The gateway's ``wall_seconds`` is only the time with a model call in flight, so it
    is not used here; verification time is the harness's, not the entrant's.
    """
    durations = [p.get("duration_s") for p in phases if p.get("name") == "agent"]
    known = [float(d) for d in durations if isinstance(d, int | float)]
    return sum(known) if known else None


def read_run(run_dir: Path) -> RunResult | None:
    """One run folder as a record, or None when it has no parseable final report."""
    parts = read_parts(run_dir)
    return None if parts is None else from_parts(run_dir, *parts)


def from_parts(
    run_dir: Path,
    report: dict[str, Any],
    meta: dict[str, Any],
    progress: dict[str, Any],
    trimmed: bool = False,
    signature: str = "",
) -> RunResult:
    """The record of a run from its three files' contents (``trimmed``: the report holds
    only the summary's keys, as the run index keeps it; ``full()`` reads the rest)."""
    usage: dict[str, Any] = progress.get("usage") or {}
    usage = usage if isinstance(usage, dict) else {}
    phases: list[dict[str, Any]] = progress.get("phases") or []
    phases = phases if isinstance(phases, list) else []

    def pick(key: str, default: str = "unknown") -> str:
        value = report.get(key) or meta.get(key)
        return str(value) if value else default

    return RunResult(
        run_dir=run_dir,
        run_id=pick("run_id", run_dir.name),
        scenario=pick("scenario"),
        era=str(report.get("era") or ""),
        agent=pick("agent"),
        agent_version=pick("agent_version"),
        model=pick("model"),
        outcome=str(report["outcome"]),
        score=_num(report.get("score")),
        partial_score=_num(report.get("partial_score")),
        started_at=str(meta.get("started_at") or ""),
        wall_s=_wall(usage, phases),
        usage=usage,
        phases=phases,
        report=report,
        meta=meta,
        trimmed=trimmed,
        signature=signature,
    )


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _version_key(version: str) -> tuple[int, tuple[int, int, int, int, str], str]:
    """Sort key: semver-like versions (``v1.2.3``, ``1.2.3-rc1``) above plain strings,
    compared numerically, a pre-release below its release (goagentbench's order)."""
    match = SEMVER.fullmatch(version.strip())
    if not match:
        return (0, (0, 0, 0, 0, ""), version)
    major, minor, patch, pre = match.groups()
    return (1, (int(major), int(minor), int(patch), 0 if pre else 1, pre or ""), version)


def _versions(runs: list[RunResult], how: str) -> list[RunResult]:
    if how == "each":
        return runs
    by_pair: dict[tuple[str, str], set[str]] = defaultdict(set)
    for r in runs:
        by_pair[(r.agent, r.model)].add(r.agent_version)
    if how == "merge":
        for r in runs:
            merged = sorted(by_pair[(r.agent, r.model)], key=_version_key)
            r.agent_version = ",".join(merged)
        return runs
    newest = {k: max(v, key=_version_key) for k, v in by_pair.items()}
    return [r for r in runs if r.agent_version == newest[(r.agent, r.model)]]


def _when(r: RunResult) -> str:
    return str(r.report.get("verified_at") or r.started_at)


def _newest(runs: list[RunResult], limit: int) -> list[RunResult]:
    """The newest ``limit`` graded runs per scenario, agent and model: an infra error
    never displaces the agent's own result, and the errors among them are kept."""
    groups: dict[tuple[str, str, str], list[RunResult]] = defaultdict(list)
    for r in runs:
        groups[(r.scenario, r.agent, r.model)].append(r)
    kept: list[RunResult] = []
    for group in groups.values():
        graded = 0
        for r in sorted(group, key=_when, reverse=True):
            if graded == limit:
                break
            kept.append(r)  # an infra error newer than the kept runs stays, in its column
            graded += 0 if r.infra_error else 1
    return kept


def tasks_after(
    runs: list[RunResult], dates: dict[str, str | None], after: str
) -> tuple[list[RunResult], list[str]]:
    """Runs of scenarios whose task date is after ``after`` (contamination-aware), and
    the scenarios left out because they have no task date."""
    undated = sorted({r.scenario for r in runs if dates.get(r.scenario) is None})
    kept = [r for r in runs if (dates.get(r.scenario) or "") > after]
    return kept, undated


def _fill_eras(runs: list[RunResult]) -> None:
    """A run whose verification failed has no era: give it the era its scenario's other
    runs (same scenario sha) were scored in, so its infra error lands in the right table."""
    by_scenario: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for r in runs:
        if r.era:
            by_scenario[(r.scenario, str(r.meta.get("scenario_sha")))][r.era] += 1
    for r in runs:
        if not r.era:
            seen = by_scenario.get((r.scenario, str(r.meta.get("scenario_sha"))))
            r.era = seen.most_common(1)[0][0] if seen else NO_ERA


def _matches(value: str, patterns: list[str]) -> bool:
    return not patterns or any(fnmatch.fnmatchcase(value, p) for p in patterns)


def scan(results_root: Path) -> list[RunResult]:
    """Every final run under ``results_root``, read from the folders themselves."""
    runs: list[RunResult] = []
    if results_root.is_dir():
        for report_path in sorted(results_root.rglob("verify/report.json")):
            run = read_run(report_path.parent.parent)
            if run is not None:
                runs.append(run)
    return runs


def collect(
    results_root: Path,
    filters: Filters | None = None,
    notes: list[str] | None = None,
    use_index: bool = True,
) -> list[RunResult]:
    """Every final, non-smoke run under ``results_root`` that passes ``filters``, through
    the run index (``index``) unless ``use_index`` is False; what a filter left out that
    a reader should know is appended to ``notes``."""
    filters = filters or Filters()
    rows = indexed_runs(results_root, filters.job) if use_index else None
    if rows is None:
        found = scan(results_root)
    else:
        found = [
            from_parts(r.run_dir, r.report, r.meta, r.progress, trimmed=True, signature=r.sig)
            for r in rows
            if r.report is not None
        ]
    runs = [r for r in found if not r.scenario.startswith("smoke/")]
    _fill_eras(runs)
    runs = [
        r
        for r in runs
        if _matches(r.scenario, filters.scenarios)
        and _matches(r.agent, filters.agents)
        and _matches(r.model, filters.models)
        and (filters.after is None or r.started_at >= filters.after)
        and (filters.job is None or r.meta.get("job") == filters.job)
    ]
    if filters.tasks_after is not None:
        root = filters.scenario_root or results_root
        dates = task_dates([r.scenario for r in runs], root)
        runs, undated = tasks_after(runs, dates, filters.tasks_after)
        if undated and notes is not None:
            more = ", ..." if len(undated) > 5 else ""
            notes.append(
                f"--tasks-after {filters.tasks_after}: {len(undated)} scenario(s) without a "
                f"task date left out ({', '.join(undated[:5])}{more})"
            )
    runs = _versions(runs, filters.versions)
    if filters.limit is not None:
        runs = _newest(runs, filters.limit)
    return sorted(runs, key=lambda r: (r.era, r.entrant, r.scenario, r.started_at))
