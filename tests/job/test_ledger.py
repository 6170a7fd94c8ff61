"""The job ledger: trial entries on disk, the job's lock, and the runs found for a job."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.errors import UserError
from harness.job.ledger import JobDir, TrialEntry, final_report, scan_folders
from harness.job.plan import Trial
from tests.support.jobs_agents import write_result

pytestmark = pytest.mark.unit

TRIAL = Trial("py/s0", "alpha", "none", "1", 0)


def test_an_entry_round_trips_and_a_damaged_one_reads_as_new(tmp_path: Path) -> None:
    job = JobDir(tmp_path / "j")
    job.trials_dir.mkdir(parents=True)
    assert job.read_entry(TRIAL) == TrialEntry.new(TRIAL)  # no file yet
    entry = TrialEntry.new(TRIAL)
    entry.status, entry.attempts, entry.detail = "error", 2, "docker died"
    job.write_entry(TRIAL, entry)
    again = job.read_entry(TRIAL)
    assert (again.status, again.attempts, again.detail) == ("error", 2, "docker died")
    assert again.updated_at != "" and again.key == TRIAL.key
    job.entry_path(TRIAL).write_text("{torn")
    assert job.read_entry(TRIAL) == TrialEntry.new(TRIAL)


def test_a_job_runs_in_one_process_at_a_time(tmp_path: Path) -> None:
    job = JobDir(tmp_path / "j")
    with job.exclusive():
        with pytest.raises(UserError, match="already running") as info, job.exclusive():
            pass
        assert info.value.field == "--job"
    with job.exclusive():  # released: taken again
        pass


def _run(tmp_path: Path, run_id: str, job: str, key: str, **kw: object) -> Path:
    run = write_result(tmp_path, "py/s0", run_id, agent="alpha", **kw)  # type: ignore[arg-type]
    meta = json.loads((run / "run.json").read_text())
    meta.update(job=job, trial_key=key)
    (run / "run.json").write_text(json.dumps(meta))
    return run


def test_scan_folders_finds_a_job_s_runs_by_trial_oldest_first(tmp_path: Path) -> None:
    _run(tmp_path, "r02", "j", "k1", outcome="failed", score=0.0)
    _run(tmp_path, "r01", "j", "k1")
    _run(tmp_path, "r03", "other", "k1")
    unfinished = _run(tmp_path, "r04", "j", "k2")
    (unfinished / "verify" / "report.json").unlink()
    found = scan_folders(tmp_path, "j")
    assert {k: [(r.run_dir.name, r.outcome, r.score) for r in v] for k, v in found.items()} == {
        "k1": [("r01", "success", 1.0), ("r02", "failed", 0.0)],
        "k2": [("r04", None, None)],
    }
    assert scan_folders(tmp_path / "none", "j") == {}


def test_a_final_report_carries_an_outcome(tmp_path: Path) -> None:
    (tmp_path / "verify").mkdir()
    report = tmp_path / "verify" / "report.json"
    for text in ("[]", '{"outcome": ""}', "{torn"):
        report.write_text(text)
        assert final_report(tmp_path) is None, text
    report.write_text('{"outcome": "success"}')
    assert final_report(tmp_path) == {"outcome": "success"}
