"""The job folder: ``jobs/<name>/job.json`` plus one ledger file per trial.

One file per trial (``trials/<slug>.json``) keeps concurrent updates independent and
every write atomic, so a SIGKILL at any instant leaves each file either old or new,
never half. The results folder stays the source of truth for "completed": a run whose
``run.json`` names this job and trial and whose ``verify/report.json`` parses is done,
even if the ledger never heard of it (killed between the two writes).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from harness.config.settings import Settings
from harness.errors import UserError
from harness.job.plan import JobConfig, Trial
from harness.results import now_iso
from harness.results.index import indexed_job_rows
from harness.util.fs import read_json, write_json

Status = Literal["pending", "running", "done", "interrupted", "error", "refused"]


class TrialEntry(BaseModel):
    """A trial's ledger record; ``infra_errors`` counts attempts that ended in ``error``."""

    key: str = Field(description="the trial's key in the job (scenario, entrant, seed, rep)")
    scenario: str = Field(description="scenario name, <family>/<name>")
    agent: str = Field(description="agents.yml name of the agent")
    model: str = Field(description="llms.yml name of the model")
    seed: str | None = Field(description="the seed asked for (None: the scenario's)")
    repetition: int = Field(description="repetition index")
    status: Status = Field(default="pending", description="where the trial is in the job")
    attempts: int = Field(default=0, description="attempts started")
    infra_errors: int = Field(default=0, description="attempts that ended in `error`")
    outcome: str | None = Field(default=None, description="the last attempt's outcome word")
    score: float | None = Field(default=None, description="the last attempt's graded score")
    run_dir: str | None = Field(default=None, description="the last attempt's result folder")
    detail: str = Field(default="", description="why it ended so (error text, refusal)")
    updated_at: str = Field(default="", description="last change, ISO 8601 UTC")

    @classmethod
    def new(cls, trial: Trial) -> TrialEntry:
        return cls(
            key=trial.key,
            scenario=trial.scenario,
            agent=trial.agent,
            model=trial.model,
            seed=trial.seed,
            repetition=trial.repetition,
        )


def jobs_root(settings: Settings) -> Path:
    """``$HARNESS_JOBS`` or ``<results>/jobs``: beside the results the jobs describe."""
    return settings.jobs_dir.resolve()


@dataclass(frozen=True)
class JobDir:
    path: Path

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def config_path(self) -> Path:
        return self.path / "job.json"

    @property
    def trials_dir(self) -> Path:
        return self.path / "trials"

    def workspace_root(self, trial: Trial) -> Path:
        """Each trial gets its own workspace root, so concurrent trials never collide."""
        return self.path / "workspaces" / trial.slug

    def read_config(self) -> JobConfig | None:
        if not self.config_path.is_file():
            return None
        data = read_json(self.config_path)
        return JobConfig.model_validate(data["config"])

    def write_config(self, config: JobConfig, harness_version: str) -> None:
        write_json(
            self.config_path,
            {
                "name": self.name,
                "config": config.model_dump(),
                "fingerprint": config.fingerprint(),
                "harness_version": harness_version,
                "written_at": now_iso(),
            },
        )

    def entry_path(self, trial: Trial) -> Path:
        return self.trials_dir / f"{trial.slug}.json"

    def read_entry(self, trial: Trial) -> TrialEntry:
        path = self.entry_path(trial)
        try:
            return TrialEntry.model_validate(read_json(path))
        except (OSError, ValueError):
            return TrialEntry.new(trial)

    def write_entry(self, trial: Trial, entry: TrialEntry) -> None:
        entry.updated_at = now_iso()
        write_json(self.entry_path(trial), entry.model_dump())

    def trial_lock_path(self, trial: Trial) -> Path:
        return self.trials_dir / f"{trial.slug}.lock"

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold the job's lock: two processes must never run the same job at once."""
        self.path.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise UserError(
                    "this job is already running in another process",
                    file=self.path,
                    field="--job",
                    fix="wait for it to finish, stop it, or pick another --job name",
                ) from None
            yield
        finally:
            os.close(fd)


def wait_trial_lock(path: Path) -> None:
    """Block until no (orphaned) worker holds this trial's lock, then release it.

    A worker holds its trial's lock for its whole life; a worker orphaned by a killed
    job notices and exits within a second. Waiting here means a resume can never run
    a trial that a dying worker is still finishing.
    """
    if not path.exists():
        return
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    finally:
        os.close(fd)


@dataclass(frozen=True)
class RunRecord:
    """A run of this job found in the results folder."""

    where: str | Path  # the run folder (a plain string as the run index gives it)
    outcome: str | None  # None: no parseable final report (interrupted or killed)
    score: float | None

    @property
    def run_dir(self) -> Path:
        return Path(self.where)


def final_report(run_dir: Path) -> dict[str, Any] | None:
    """The run's verify report if it exists, parses and carries an outcome."""
    try:
        report = read_json(run_dir / "verify" / "report.json")
    except (OSError, ValueError):
        return None
    if not isinstance(report, dict) or not report.get("outcome"):
        return None
    return report


def scan_results(results_root: Path, job: str) -> dict[str, list[RunRecord]]:
    """Runs recorded for ``job``, by trial key, oldest first: through the run index
    beside the result folders (the job's rows only), else by reading every folder."""
    rows = indexed_job_rows(results_root, job)
    if rows is None:
        return scan_folders(results_root, job)
    found: dict[str, list[RunRecord]] = {}
    for row in rows:
        if row.trial_key:
            record = RunRecord(row.run_dir, row.outcome, row.score)
            found.setdefault(str(row.trial_key), []).append(record)
    for records in found.values():
        if len(records) > 1:
            records.sort(key=lambda r: os.path.basename(r.where))
    return found


def scan_folders(results_root: Path, job: str) -> dict[str, list[RunRecord]]:
    """``scan_results`` by reading every run.json under ``results_root``."""
    found: dict[str, list[RunRecord]] = {}
    if not results_root.is_dir():
        return found
    for meta_path in sorted(results_root.rglob("run.json")):
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(meta, dict) or meta.get("job") != job or not meta.get("trial_key"):
            continue
        report = final_report(meta_path.parent)
        record = RunRecord(
            meta_path.parent,
            None if report is None else str(report["outcome"]),
            None if report is None else report.get("score"),
        )
        found.setdefault(str(meta["trial_key"]), []).append(record)
    for records in found.values():
        records.sort(key=lambda r: r.run_dir.name)
    return found
