"""JobRunner.prepare() (a resume) without processes: the ledger is read through its one-file
cache only while each entry's file is unchanged, a complete job writes nothing and
waits for no trial lock, and a report changed after indexing is read again."""

from __future__ import annotations

import fcntl
import json
import os
import threading
from pathlib import Path

import pytest

from harness.config.settings import Settings
from harness.job.ledger import JobDir, scan_results
from harness.job.ledgercache import CACHE_FILE
from harness.job.plan import Trial
from harness.job.progress import LiveProgress, Tally
from harness.job.runner import JobRunner
from tests.support.jobs_agents import write_result

pytestmark = pytest.mark.unit
JOB = "j"


def _trials() -> list[Trial]:
    return [Trial(f"py/s{i}", "alpha", "none", "1", 0) for i in range(3)]


def _runner(tmp_path: Path, trials: list[Trial], retry_errors: bool = True) -> JobRunner:
    settings = Settings(
        project_root=tmp_path,
        workspace=tmp_path / "ws",
        results=tmp_path / "results",
        scenario_root=tmp_path / "scenarios",
        jobs=tmp_path / "jobs",
    )
    return JobRunner(
        JobDir(tmp_path / "jobs" / JOB),
        None,  # type: ignore[arg-type]  # prepare() never reads the config
        trials,
        settings,
        concurrency=1,
        max_interruptions=0,
        progress=LiveProgress(Tally(total=len(trials))),
        retry_errors=retry_errors,
    )


def _result(tmp_path: Path, trial: Trial, run_id: str, outcome: str = "success") -> Path:
    """A finished run of ``trial`` that appears in the results folder whole: a trial's
    run.json names its job from its first write, and a run folder written here in steps
    (the job's name added after the report) could be indexed, by a resume reading the
    results at that moment, as a finished run of no job."""
    staged = write_result(
        tmp_path / "staging", trial.scenario, run_id, agent="alpha", outcome=outcome
    )
    meta = json.loads((staged / "run.json").read_text())
    meta.update(job=JOB, trial_key=trial.key)
    (staged / "run.json").write_text(json.dumps(meta))
    run = tmp_path / "results" / trial.scenario / run_id
    run.parent.mkdir(parents=True, exist_ok=True)
    staged.rename(run)
    return run


def _mtimes(job: JobDir) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in job.trials_dir.glob("*.json")}


def test_a_complete_job_resumes_from_the_cache_and_writes_nothing(tmp_path: Path) -> None:
    trials = _trials()
    for i, trial in enumerate(trials):
        _result(tmp_path, trial, f"r-{i:02d}")
    first = _runner(tmp_path, trials)
    todo, entries = first.prepare()  # the ledger written from the results
    assert todo == [] and [e.status for e in entries] == ["done"] * 3
    assert (first.job.path / CACHE_FILE).is_file()
    written = _mtimes(first.job)

    # a worker still holding a complete trial's lock does not hold up the resume
    lock = os.open(first.job.trial_lock_path(trials[0]), os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        result: list[object] = []
        worker = threading.Thread(target=lambda: result.append(_runner(tmp_path, trials).prepare()))
        worker.start()
        worker.join(timeout=20)
        assert result, "prepare() waited for the lock of a complete trial"
    finally:
        os.close(lock)
    todo, again = result[0]  # type: ignore[misc]
    assert todo == [] and again == entries
    assert _mtimes(first.job) == written  # nothing written back


def test_an_unfinished_trial_is_run_and_a_changed_report_is_read_again(tmp_path: Path) -> None:
    trials = _trials()
    done = _result(tmp_path, trials[0], "r-00")
    _result(tmp_path, trials[1], "r-01", outcome="error")
    todo, entries = _runner(tmp_path, trials, retry_errors=False).prepare()
    assert todo == trials[2:] and [e.status for e in entries] == ["done", "error", "pending"]
    assert entries[1].infra_errors == 1  # more than max_interruptions (0): given up
    retrying = _runner(tmp_path, trials)  # by default a later run tries the error again
    todo, entries = retrying.prepare()
    assert todo == trials[1:] and retrying.retried == [trials[1].key]

    report = json.loads((done / "verify" / "report.json").read_text())
    report.update(outcome="failed", score=0.0)
    (done / "verify" / "report.json").write_text(json.dumps(report, indent=1))
    found = scan_results(tmp_path / "results", JOB)
    assert [(r.outcome, r.score, r.run_dir) for r in found[trials[0].key]] == [
        ("failed", 0.0, done)
    ]
    _, entries = _runner(tmp_path, trials).prepare()
    assert (entries[0].outcome, entries[0].score) == ("failed", 0.0)


def test_a_run_an_orphaned_worker_finishes_while_waited_for_is_not_run_again(
    tmp_path: Path,
) -> None:
    trials = _trials()
    _result(tmp_path, trials[0], "r-00")
    runner = _runner(tmp_path, trials)
    runner.job.trials_dir.mkdir(parents=True)
    lock = os.open(runner.job.trial_lock_path(trials[1]), os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(lock, fcntl.LOCK_EX)  # the worker of trials[1], still finishing
    result: list[object] = []
    worker = threading.Thread(target=lambda: result.append(runner.prepare()))
    try:
        worker.start()
        _result(tmp_path, trials[1], "r-01")  # its run ends before it lets go of the lock
    finally:
        os.close(lock)
    worker.join(timeout=20)
    todo, entries = result[0]  # type: ignore[misc]
    assert todo == trials[2:] and [e.status for e in entries] == ["done", "done", "pending"]
