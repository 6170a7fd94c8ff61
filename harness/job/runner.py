"""Run a job's trials K at a time, resuming from the ledger and the results folder.

Threads only schedule; where a trial runs is the executor's business
(``harness.job.executors.base``: a worker process per trial on this machine, or a Ray task on
a cluster node). Stopping the job is: set ``stop``, stop the executor (every trial in
flight unwinds its ``finally`` blocks and removes its containers), record the trials
they were running as ``interrupted``. Completed trials are never redone: on start every trial is
classified from the results folder, which a killed job cannot have left half-written
(every file there is written atomically).
"""

from __future__ import annotations

import os
import shutil
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.config.settings import Settings
from harness.job.executors.base import Executor, LocalExecutor, TrialFiles
from harness.job.ledger import JobDir, RunRecord, TrialEntry, scan_results, wait_trial_lock
from harness.job.plan import JobConfig, Trial
from harness.job.progress import LiveProgress
from harness.job.worker import settings_to_json

COMPLETE_OUTCOMES = frozenset({"success", "failed", "timeout"})


@dataclass
class JobOutcome:
    total: int
    already_done: int
    statuses: Counter[str] = field(default_factory=Counter)
    outcomes: Counter[str] = field(default_factory=Counter)
    ran: list[str] = field(default_factory=list)  # keys of trials started by this run
    interrupted: bool = False


def classify(
    trial: Trial, entry: TrialEntry, records: list[RunRecord], max_interruptions: int
) -> TrialEntry:
    """The trial's ledger entry brought up to date with what the results folder shows.

    Done: a run with a final report and an agent outcome. Given up: more infrastructure
    errors than ``max_interruptions`` allows retries. Anything else is to be (re)run;
    a trial the ledger still calls ``running`` was interrupted by a killed job.
    """
    entry = entry.model_copy()
    finished = [r for r in records if r.outcome in COMPLETE_OUTCOMES]
    errors = sum(1 for r in records if r.outcome == "error")
    entry.infra_errors = max(entry.infra_errors, errors)
    if finished:
        first = finished[0]
        entry.status, entry.outcome, entry.score = "done", first.outcome, first.score
        entry.run_dir = str(first.run_dir)
    elif entry.infra_errors > max_interruptions:
        entry.status, entry.outcome = "error", "error"
    elif entry.status in {"running", "done"}:
        entry.status = "interrupted"
    return entry


class JobRunner:
    """One invocation of a job: classify, run what is missing, stop cleanly."""

    def __init__(
        self,
        job: JobDir,
        config: JobConfig,
        trials: list[Trial],
        settings: Settings,
        *,
        concurrency: int | None,
        max_interruptions: int,
        progress: LiveProgress,
        executor: Executor | None = None,
    ) -> None:
        self.job, self.config, self.trials, self.settings = job, config, trials, settings
        self.concurrency = None if concurrency is None else max(1, concurrency)
        self.max_interruptions = max(0, max_interruptions)
        self.progress = progress
        self.stop = threading.Event()
        self._lock = threading.Lock()
        self._queue: list[Trial] = []
        self.executor: Executor = executor or LocalExecutor(settings.project_root)

    def prepare(self) -> tuple[list[Trial], list[TrialEntry]]:
        """Entries for every trial (written back) and the trials still to run."""
        self.job.trials_dir.mkdir(parents=True, exist_ok=True)
        for trial in self.trials:
            wait_trial_lock(self.job.trial_lock_path(trial))
        found = scan_results(self.settings.results, self.job.name)
        todo: list[Trial] = []
        entries: list[TrialEntry] = []
        for trial in self.trials:
            before = self.job.read_entry(trial)
            entry = classify(trial, before, found.get(trial.key, []), self.max_interruptions)
            if entry != before:
                self.job.write_entry(trial, entry)
            entries.append(entry)
            if entry.status not in {"done", "error"}:
                todo.append(trial)
        return todo, entries

    def run(self, todo: list[Trial], outcome: JobOutcome) -> JobOutcome:
        """Run ``todo``; on KeyboardInterrupt/SystemExit stop workers, then re-raise."""
        from harness.fleet.router_service import job_router

        # one routing state for the whole job: every trial's gateway leases hosts from it
        fleet_file = self.settings.fleet_file
        fleet = fleet_file if len(todo) > 1 and fleet_file.is_file() else None
        with self.executor, job_router(fleet, self.executor.router_host()):
            return self._run(todo, outcome)

    def _run(self, todo: list[Trial], outcome: JobOutcome) -> JobOutcome:
        self._queue = list(reversed(todo))
        # Waited for through events, not Thread.join: a join interrupted by Ctrl-C can
        # leave is_alive() False for a thread still running (CPython gh-90882).
        concurrency = self.concurrency or self.executor.slots() or 1
        finished = [threading.Event() for _ in range(min(concurrency, len(todo)))]
        for i, done in enumerate(finished):
            threading.Thread(
                target=self._work, args=(outcome, done), name=f"trial-{i}", daemon=True
            ).start()
        try:
            for done in finished:
                while not done.wait(timeout=0.2):
                    pass
        except BaseException:
            outcome.interrupted = True
            self.stop.set()
            self.executor.stop()
            for done in finished:
                done.wait()
            raise
        return outcome

    # -- worker threads -------------------------------------------------------------

    def _next(self) -> Trial | None:
        with self._lock:
            if self.stop.is_set() or not self._queue:
                return None
            return self._queue.pop()

    def _work(self, outcome: JobOutcome, done: threading.Event) -> None:
        try:
            self._work_queue(outcome)
        finally:
            done.set()

    def _work_queue(self, outcome: JobOutcome) -> None:
        while (trial := self._next()) is not None:
            self.progress.started(trial.key)
            with self._lock:
                outcome.ran.append(trial.key)
            entry = self._run_with_retries(trial)
            with self._lock:
                outcome.statuses[entry.status] += 1
                if entry.outcome:
                    outcome.outcomes[entry.outcome] += 1
            self.progress.finished(trial.key, entry.status, entry.outcome, entry.detail)

    def _run_with_retries(self, trial: Trial) -> TrialEntry:
        entry = self.job.read_entry(trial)
        while True:
            entry.status, entry.attempts = "running", entry.attempts + 1
            entry.detail = ""
            self.job.write_entry(trial, entry)
            result = self._spawn(trial)
            if result is None:  # the worker died without a word
                if self.stop.is_set():
                    entry.status, entry.detail = "interrupted", "stopped by the user"
                    self.job.write_entry(trial, entry)
                    return entry
                result = {"status": "error", "outcome": "error", "detail": "worker died"}
            entry.status = result["status"]
            entry.outcome = result.get("outcome")
            entry.score = result.get("score")
            entry.run_dir = result.get("run_dir")
            entry.detail = result.get("detail") or ""
            if entry.outcome == "error":
                entry.status = "error"
                entry.infra_errors += 1
                if entry.infra_errors <= self.max_interruptions and not self.stop.is_set():
                    self.job.write_entry(trial, entry)
                    self.progress.retrying(trial.key, entry.detail)
                    continue
            self.job.write_entry(trial, entry)
            if entry.status == "done":  # the result folder has the diff; free the disk
                shutil.rmtree(self.job.workspace_root(trial), ignore_errors=True)
            return entry

    def _spawn(self, trial: Trial) -> dict[str, Any] | None:
        base = self.job.trials_dir / trial.slug
        settings = settings_to_json(self.settings)
        settings["workspace"] = str(self.job.workspace_root(trial))
        spec = {
            "key": trial.key,
            "job": self.job.name,
            "sandbox": self.config.sandbox,
            "budget": (
                self.config.budget.model_dump(exclude_none=True) if self.config.budget else None
            ),
            "trial": {
                "scenario": trial.scenario,
                "agent": trial.agent,
                "model": trial.model,
                "seed": trial.seed,
                "repetition": trial.repetition,
            },
            "settings": settings,
            "lock": str(self.job.trial_lock_path(trial)),
            "parent": os.getpid(),
        }
        files = TrialFiles(
            spec=Path(f"{base}.spec.json"),
            out=Path(f"{base}.out.json"),
            log=self.job.path / "logs" / f"{trial.slug}.log",
        )
        return self.executor.run(spec, files)
