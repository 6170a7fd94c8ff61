"""Which runs ``report``, ``compare`` and ``board`` read: one selection, one default.

By default each reads the newest graded run per scenario, agent and model, of the
newest agent version (goagentbench's defaults). ``--job`` keeps every run of that job
(its repetitions are its design), ``--limit N`` the newest N, ``--all-runs`` every run.
Each command prints ``describe()`` so a reader knows what the figures count.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from harness.errors import UserError
from harness.report.collect import Filters, RunResult, collect


def split(values: list[str] | None) -> list[str]:
    """``--x a,b --x c`` -> ``[a, b, c]``."""
    return [p.strip() for v in values or [] for p in v.split(",") if p.strip()]


@dataclass(frozen=True)
class Selection:
    """What ``report``, ``compare`` and ``board`` read, as the user chose it."""

    scenarios: list[str] | None = None
    agents: list[str] | None = None
    models: list[str] | None = None
    after: str | None = None
    limit: int | None = 1  # newest N per scenario, agent and model; None: every run
    job: str | None = None
    versions: str = "newest"  # "newest", "merge" (every version, one row) or "each"
    tasks_after: str | None = None

    def describe(self) -> str:
        """The selection in words, e.g. ``the newest run per scenario, agent and model``."""
        if self.limit is None:
            what = f"every run of job {self.job}" if self.job else "every run (all repetitions)"
        elif self.limit == 1:
            what = "the newest run per scenario, agent and model"
        else:
            what = f"the newest {self.limit} runs per scenario, agent and model"
        if self.job and self.limit is not None:
            what += f" of job {self.job}"
        versions = {
            "newest": "newest agent version",
            "merge": "every agent version merged",
            "each": "each agent version apart",
        }[self.versions]
        widen = "" if self.limit is None else "; --all-runs for every run"
        return f"selection: {what}, {versions}{widen}"


def default_selection(
    scenarios: list[str] | None = None,
    agents: list[str] | None = None,
    models: list[str] | None = None,
    after: str | None = None,
    limit: int | None = None,
    job: str | None = None,
    all_agent_versions: bool = False,
    tasks_after: str | None = None,
    all_runs: bool = False,
) -> Selection:
    """The one default of every command: the newest run per scenario, agent and model
    of the newest agent version; ``--job`` (or ``--all-runs``) keeps every run unless
    ``--limit`` is given."""
    if all_runs and limit is not None:
        raise UserError(
            "--all-runs and --limit both given", field="--all-runs", fix="use one of them"
        )
    if limit is None and job is None and not all_runs:
        limit = 1
    versions = "merge" if all_agent_versions else "newest"
    return Selection(scenarios, agents, models, after, limit, job, versions, tasks_after)


def _iso(value: str | None, flag: str) -> None:
    if value is None:
        return
    try:
        datetime.fromisoformat(value)
    except ValueError:
        raise UserError(
            f"'{value}' is not an ISO date", field=flag, fix=f"e.g. {flag} 2025-01-31"
        ) from None


def select(
    sel: Selection,
    results: Path,
    scenario_root: Path | None = None,
    notes: list[str] | None = None,
) -> list[RunResult]:
    """The runs ``sel`` names under ``results`` (bad values: a ``UserError``)."""
    if sel.limit is not None and sel.limit < 1:
        raise UserError("--limit must be at least 1", field="--limit", fix="e.g. --limit 5")
    _iso(sel.after, "--after")
    _iso(sel.tasks_after, "--tasks-after")
    filters = Filters(
        split(sel.scenarios),
        split(sel.agents),
        split(sel.models),
        sel.after,
        sel.limit,
        job=sel.job,
        versions=sel.versions,
        tasks_after=sel.tasks_after,
        scenario_root=scenario_root,
    )
    runs = collect(results, filters, notes)
    if sel.job is not None and not runs:
        raise UserError(
            f"no finished runs of job '{sel.job}'",
            field="--job",
            fix="see `harness jobs` (or the job folder's name) for job ids",
        )
    return runs
