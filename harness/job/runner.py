"""Run a job's trials K at a time, resuming from the ledger and the results folder.

Threads only schedule; where a trial runs is the executor's business
(``harness.job.executors.base``: a worker process per trial on this machine, or a Ray task on
a cluster node). Stopping the job is: set ``stop``, stop the executor (every trial in
flight unwinds its ``finally`` blocks and removes its containers), record the trials
they were running as ``interrupted``. Completed trials are never redone: on start every trial is
classified from the results folder, which a killed job cannot have left half-written
(every file there is written atomically). A trial that ended in an infrastructure
``error`` is run again by the next invocation (``retry_errors``, on by default), up to
``1 + max_interruptions`` attempts per invocation; an error that the same attempt would
meet again at once (``retry.steady``: a host name that does not resolve, the agent's program
missing) is not retried within one invocation.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.config.settings import Settings
from harness.errors import HarnessError
from harness.job import resume_signature, retry
from harness.job.executors.base import Executor, LocalExecutor, TrialFiles
from harness.job.ledger import JobDir, RunRecord, TrialEntry, scan_results, wait_trial_lock
from harness.job.ledgercache import LedgerCache, StoredEntries
from harness.job.plan import JobConfig, Trial
from harness.job.progress import LiveProgress
from harness.job.worker import settings_to_json

COMPLETE_OUTCOMES = frozenset({"success", "failed", "timeout"})
DONE = frozenset({"done", "error"})  # ledger statuses a resume does not run again
# (an ``error`` is run again when the job retries errors, as it does by default)
FAILED = frozenset({"failed", "timeout"})


@dataclass
class JobOutcome:
    total: int
    already_done: int
    statuses: Counter[str] = field(default_factory=Counter)
    outcomes: Counter[str] = field(default_factory=Counter)
    ran: list[str] = field(default_factory=list)  # keys of trials started by this run
    interrupted: bool = False
    retried: list[str] = field(default_factory=list)  # keys of earlier errors run again
    final: dict[str, str] = field(default_factory=dict)  # key -> ledger status now

    @property
    def errors_left(self) -> int:
        """Trials of the whole job (not only this invocation's) that are ``error`` now."""
        return sum(1 for status in self.final.values() if status == "error")

    def recovered(self) -> list[str]:
        """Earlier errors that this invocation ran again and that are no longer errors."""
        return [k for k in self.retried if self.final.get(k) not in ("error", "interrupted")]


def classify(
    trial: Trial, entry: TrialEntry, records: list[RunRecord], max_interruptions: int
) -> TrialEntry:
    """The trial's ledger entry brought up to date with what the results folder shows
    (``entry`` itself when nothing changes: a resume of a complete job copies nothing).

    Done: a run with a final report and an agent outcome. Given up: more infrastructure
    errors than ``max_interruptions`` allows retries. Anything else is to be (re)run;
    a trial the ledger still calls ``running`` was interrupted by a killed job.
    """
    first: RunRecord | None = None
    errors = 0
    for r in records:
        if r.outcome in COMPLETE_OUTCOMES:
            first = first or r
        elif r.outcome == "error":
            errors += 1
    infra_errors = max(entry.infra_errors, errors)
    if first is not None:
        run_dir = str(first.where)
        if (entry.status, entry.outcome, entry.score, entry.run_dir, entry.infra_errors) == (
            "done", first.outcome, first.score, run_dir, infra_errors
        ):  # fmt: skip
            return entry  # the common case on a resume: nothing to copy
        update: dict[str, Any] = {"status": "done", "outcome": first.outcome}
        update.update(score=first.score, run_dir=run_dir)
    elif infra_errors > max_interruptions:
        update = {"status": "error", "outcome": "error"}
    elif entry.status in {"running", "done"}:
        update = {"status": "interrupted"}
    else:
        update = {}
    update["infra_errors"] = infra_errors
    if all(getattr(entry, k) == v for k, v in update.items()):
        return entry
    return entry.model_copy(update=update)


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
        retry_errors: bool = True,
    ) -> None:
        self.job, self.config, self.trials, self.settings = job, config, trials, settings
        self.concurrency = None if concurrency is None else max(1, concurrency)
        self.max_interruptions = max(0, max_interruptions)
        self.retry_errors = retry_errors
        self.progress = progress
        self.stop = threading.Event()
        self._lock = threading.Lock()
        self._queue: list[Trial] = []
        self.executor: Executor = executor or LocalExecutor(settings.project_root)
        self.ledger = LedgerCache(job)
        self.failed = 0  # done trials that failed or timed out, as prepare() found them
        self.errors = 0  # trials left as infrastructure errors (not run again), likewise
        self.retried: list[str] = []  # keys of earlier errors this invocation runs again

    def prepare(self) -> tuple[list[Trial], Sequence[TrialEntry]]:
        """Entries for every trial (written back) and the trials still to run.

        A complete job whose signature (``harness.job.resume_signature``) still holds is taken
        from it: nothing to run, no trial looked at (its entries are read only if asked
        for). Otherwise every trial is classified from the results: a trial they show
        complete is done whatever any worker still does; for every other trial (given up
        ones too) an orphaned worker's lock is waited for, then the results are read
        again, so a trial it finished meanwhile is not run twice nor given up.
        """
        results = self.settings.results
        plan = resume_signature.plan_hash(self.trials)
        sig = resume_signature.load(self.job.path)
        if sig is not None and sig.holds(self.job.trials_dir, results, plan):
            self.failed, self.errors = sig.failed, 0
            return [], StoredEntries(self.ledger, self.trials)
        self.job.trials_dir.mkdir(parents=True, exist_ok=True)
        found = scan_results(results, self.job.name)
        pairs = [self._classify(t, found) for t in self.trials]
        open_ = [i for i, (_, e) in enumerate(pairs) if e.status != "done"]
        if open_:
            for i in open_:
                wait_trial_lock(self.job.trial_lock_path(self.trials[i]))
            found = scan_results(results, self.job.name)
            for i in open_:
                pairs[i] = self._classify(self.trials[i], found, pairs[i][0])
        for trial, (before, entry) in zip(self.trials, pairs, strict=True):
            if entry is not before and entry != before:
                self.ledger.write(trial, entry)
        self.ledger.save()
        entries = [e for _, e in pairs]
        again = {"error"} if self.retry_errors else set()
        todo = [
            t
            for t, e in zip(self.trials, entries, strict=True)
            if e.status not in DONE or e.status in again
        ]
        self.retried = [e.key for e in entries if e.status in again]
        self.failed = sum(1 for e in entries if e.status == "done" and e.outcome in FAILED)
        self.errors = sum(1 for e in entries if e.status == "error" and e.status not in again)
        if any(e.status != "done" for e in entries):
            resume_signature.clear(self.job.path)
        else:
            scenarios = {t.scenario for t in self.trials}
            run_dirs = [str(r.where) for records in found.values() for r in records]
            resume_signature.record(
                self.job.path, self.job.trials_dir, results, plan, scenarios, run_dirs,
                self.failed,
            )  # fmt: skip
        return todo, entries

    def _classify(
        self, trial: Trial, found: dict[str, list[RunRecord]], before: TrialEntry | None = None
    ) -> tuple[TrialEntry, TrialEntry]:
        """(the ledger's entry, the entry the results make of it)."""
        if before is None:
            before = self.ledger.read(trial)
        return before, classify(trial, before, found.get(trial.key, []), self.max_interruptions)

    def run(self, todo: list[Trial], outcome: JobOutcome) -> JobOutcome:
        """Run ``todo``; on KeyboardInterrupt/SystemExit stop workers, then re-raise.
        Nothing to run starts nothing (no executor, no router, not even their imports)."""
        if not todo:
            self.ledger.save()
            return outcome
        from harness.fleet.builtin import fleet_key, job_engines
        from harness.fleet.router_service import job_router

        # one routing state for the whole job: every trial's gateway leases hosts from it
        fleet_file = self.settings.fleet_file
        fleet = fleet_file if len(todo) > 1 and fleet_file.is_file() else None
        try:
            with (
                self.executor,
                # one engine per model file, shared by the job's trials
                job_engines(self._engines(todo), fleet) as started,
                job_router(
                    started.get(fleet_key(fleet), fleet) if fleet else None,
                    self.executor.router_host(),
                ),
            ):
                return self._run(todo, outcome)
        finally:
            self.ledger.save()  # the entries written, so the next resume reads one file

    def _engines(self, todo: list[Trial]) -> dict[str, str]:
        """The models of ``todo`` served by an engine harness starts: name -> its spec."""
        from harness.config.entrants import GGUF_PREFIX, Registry, gguf_model_name

        if len(todo) < 2:
            return {}  # a lone trial starts (and stops) its own
        try:
            llms = Registry.load(self.settings.project_root).llms
        except HarnessError:
            return {}  # the trials report the broken registry themselves
        out: dict[str, str] = {}
        for trial in todo:
            if trial.model.startswith(GGUF_PREFIX):
                out[gguf_model_name(trial.model)] = trial.model
            elif trial.model in llms and llms[trial.model].engine:
                out[trial.model] = str(llms[trial.model].engine)
        return out

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
                outcome.final[trial.key] = entry.status
                outcome.statuses[entry.status] += 1
                if entry.outcome:
                    outcome.outcomes[entry.outcome] += 1
            self.progress.finished(trial.key, entry.status, entry.outcome, entry.detail)

    def _run_with_retries(self, trial: Trial) -> TrialEntry:
        """Attempts of one trial: an infrastructure error is tried again up to
        ``max_interruptions`` times in this invocation, unless it is steady."""
        entry = self.ledger.read(trial)
        errors_here = 0
        while True:
            entry.status, entry.attempts = "running", entry.attempts + 1
            entry.detail = ""
            self.ledger.write(trial, entry)
            result = self._spawn(trial)
            if result is None:  # the worker died without a word
                if self.stop.is_set():
                    entry.status, entry.detail = "interrupted", "stopped by the user"
                    self.ledger.write(trial, entry)
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
                errors_here += 1
                again = errors_here <= self.max_interruptions and not self.stop.is_set()
                if again and retry.steady(result):
                    entry.detail = retry.say_steady(entry.detail)
                elif again:
                    self.ledger.write(trial, entry)
                    self.progress.retrying(trial.key, entry.detail)
                    continue
            self.ledger.write(trial, entry)
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
            "replay": self.config.replay,
            "agent_env": self.config.agent_env,
            "agent_args": self.config.agent_args,
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
