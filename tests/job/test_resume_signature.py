"""A complete job's signature: the next ``prepare()`` takes the classification from it
without looking at any trial, and every change it can see (a run folder removed or
added, a ledger entry rewritten, another plan, an unfinished job, fresh mtimes) sends
it back to the full scan, which classifies correctly."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

import harness.job.runner as runner_module
from harness.job import resume_signature
from harness.job.ledger import TrialEntry
from harness.job.ledgercache import StoredEntries
from harness.job.plan import Trial
from tests.job.test_runner import JOB, _result, _runner

pytestmark = pytest.mark.unit


def _trials(reps: int = 1) -> list[Trial]:
    return [Trial(f"py/s{i}", "alpha", "none", "1", r) for r in range(reps) for i in range(2)]


def _age(tmp_path: Path) -> None:
    """Every folder's mtime 10 s in the past, as a job finished a while ago has them."""
    past = time.time_ns() - 10_000_000_000
    for folder in [tmp_path, *[p for p in tmp_path.rglob("*") if p.is_dir()]]:
        os.utime(folder, ns=(past, past))


@pytest.fixture
def scans(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The jobs whose results ``prepare()`` scanned (the full path)."""
    seen: list[str] = []
    real = runner_module.scan_results

    def counting(results: Path, job: str) -> Any:
        seen.append(job)
        return real(results, job)

    monkeypatch.setattr(runner_module, "scan_results", counting)
    return seen


def _complete(tmp_path: Path, trials: list[Trial]) -> dict[str, Path]:
    runs = {t.key: _result(tmp_path, t, f"r-{i:02d}", "failed" if i else "success")
            for i, t in enumerate(trials)}  # fmt: skip
    _, entries = _runner(tmp_path, trials).prepare()  # the ledger written: fresh mtimes
    assert [e.status for e in entries] == ["done"] * len(trials)
    _age(tmp_path)
    return runs


def test_a_complete_job_resumes_from_its_signature(tmp_path: Path, scans: list[str]) -> None:
    trials = _trials()
    _complete(tmp_path, trials)
    scans.clear()
    first = _runner(tmp_path, trials)
    todo, entries = first.prepare()  # full scan, nothing fresh: the signature recorded
    assert todo == [] and scans == [JOB] and first.failed == 1
    assert (first.job.path / resume_signature.RECORD_FILE).is_file()

    again = _runner(tmp_path, trials)
    todo, stored = again.prepare()
    assert todo == [] and scans == [JOB], "the fast path scanned the results"
    assert isinstance(stored, StoredEntries) and again.failed == 1 and again.errors == 0
    assert len(stored) == 2 and stored == entries and stored[1].outcome == "failed"


def _signed(tmp_path: Path, trials: list[Trial]) -> dict[str, Path]:
    runs = _complete(tmp_path, trials)
    _runner(tmp_path, trials).prepare()
    assert (tmp_path / "jobs" / JOB / resume_signature.RECORD_FILE).is_file()
    return runs


def test_a_run_folder_removed_by_hand_is_run_again(tmp_path: Path, scans: list[str]) -> None:
    trials = _trials()
    runs = _signed(tmp_path, trials)
    shutil.rmtree(runs[trials[1].key])
    runner = _runner(tmp_path, trials)
    todo, entries = runner.prepare()
    assert todo == [trials[1]] and [e.status for e in entries] == ["done", "interrupted"]
    assert not (runner.job.path / resume_signature.RECORD_FILE).exists()  # not complete: none kept


def test_a_run_added_to_a_scenario_folder_is_classified(tmp_path: Path, scans: list[str]) -> None:
    trials = _trials()
    _signed(tmp_path, trials)
    _result(tmp_path, trials[0], "r-00-retry", outcome="error")  # after the first: counted
    scans.clear()
    todo, entries = _runner(tmp_path, trials).prepare()
    assert scans and todo == [] and entries[0].infra_errors == 1


def test_a_new_scenario_folder_of_the_family_sends_it_to_the_scan(
    tmp_path: Path, scans: list[str]
) -> None:
    trials = _trials()
    _signed(tmp_path, trials)
    (tmp_path / "results" / "py" / "s9").mkdir()
    scans.clear()
    assert _runner(tmp_path, trials).prepare()[0] == [] and scans == [JOB]


def test_a_ledger_entry_rewritten_sends_it_to_the_scan(tmp_path: Path, scans: list[str]) -> None:
    trials = _trials()
    _signed(tmp_path, trials)
    runner = _runner(tmp_path, trials)
    entry = runner.job.read_entry(trials[0])
    runner.job.write_entry(trials[0], entry.model_copy(update={"status": "pending"}))
    scans.clear()
    todo, entries = runner.prepare()  # the write renamed a file into trials/: seen
    assert scans == [JOB] and todo == [] and entries[0].status == "done"
    assert TrialEntry.model_validate(json.loads(runner.job.entry_path(trials[0]).read_text()))


def test_a_changed_plan_is_classified_in_full(tmp_path: Path, scans: list[str]) -> None:
    trials = _trials()
    _signed(tmp_path, trials)
    more = _trials(reps=2)  # --reps 2: two trials more
    scans.clear()
    todo, entries = _runner(tmp_path, more).prepare()
    assert scans and todo == more[2:] and [e.status for e in entries[2:]] == ["pending"] * 2
    fewer = trials[:1]
    scans.clear()
    assert _runner(tmp_path, fewer).prepare()[0] == [] and scans


def test_an_unfinished_job_and_fresh_mtimes_record_no_signature(
    tmp_path: Path, scans: list[str]
) -> None:
    trials = _trials()
    _result(tmp_path, trials[0], "r-00")
    _age(tmp_path)
    runner = _runner(tmp_path, trials)
    assert runner.prepare()[0] == trials[1:]
    assert not (runner.job.path / resume_signature.RECORD_FILE).exists()
    _result(tmp_path, trials[1], "r-01")  # the folder it lands in: changed just now
    assert _runner(tmp_path, trials).prepare()[0] == []
    assert not (runner.job.path / resume_signature.RECORD_FILE).exists(), "a fresh mtime trusted"
    scans.clear()
    assert _runner(tmp_path, trials).prepare()[0] == [] and scans == [JOB]


def test_a_damaged_record_is_ignored(tmp_path: Path, scans: list[str]) -> None:
    trials = _trials()
    _signed(tmp_path, trials)
    (tmp_path / "jobs" / JOB / resume_signature.RECORD_FILE).write_text("{not json")
    scans.clear()
    assert _runner(tmp_path, trials).prepare()[0] == [] and scans == [JOB]
