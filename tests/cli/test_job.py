"""``harness run``'s own small decisions (cli/job.py): a resumed job's configuration, the
counts of its last line, what a retry came to. The job itself is run by tests/job/."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from harness.cli.job import _check_resume, _job_counts, _retry_lines
from harness.errors import UserError
from harness.job.ledger import JobDir, TrialEntry
from harness.job.plan import JobConfig
from harness.job.runner import JobOutcome

pytestmark = pytest.mark.unit


class Stored:
    def __init__(self, config: Any) -> None:
        self.config = config
        self.name = "nightly"
        self.config_path = Path("/jobs/nightly/job.json")

    def read_config(self) -> Any:
        return self.config


def config(**fields: Any) -> Any:
    data = {"agents": ["oracle"], "seeds": 1, **fields}
    return SimpleNamespace(model_dump=lambda: data, **data)


def test_a_resume_with_the_same_configuration_or_none_stored_goes_on() -> None:
    same = config()
    _check_resume(cast(JobDir, Stored(None)), cast(JobConfig, same), force=False)
    _check_resume(cast(JobDir, Stored(same)), cast(JobConfig, same), force=False)


def test_a_changed_configuration_is_refused_unless_forced() -> None:
    job = cast(JobDir, Stored(config()))
    with pytest.raises(UserError) as caught:
        _check_resume(job, cast(JobConfig, config(seeds=3)), force=False)
    said = str(caught.value)
    assert "job 'nightly' was started with a different configuration (changed: seeds)" in said
    assert "--force" in said
    _check_resume(job, cast(JobConfig, config(seeds=3)), force=True)


def entry(key: str, status: str, outcome: str | None = None) -> str:
    return TrialEntry(
        key=key, scenario="py/x", agent="a", model="m", seed=None, repetition=0,
        status=status, outcome=outcome,  # type: ignore[arg-type]
    ).model_dump_json()  # fmt: skip


def test_the_counts_are_every_trial_of_the_ledger_by_outcome(tmp_path: Path) -> None:
    job = JobDir(tmp_path)
    job.trials_dir.mkdir()
    (job.trials_dir / "a.json").write_text(entry("a", "done", "success"))
    (job.trials_dir / "b.json").write_text(entry("b", "done", "failed"))
    (job.trials_dir / "c.json").write_text(entry("c", "done", "success"))
    (job.trials_dir / "d.json").write_text(entry("d", "pending"))
    # a worker's files, no entries, even when they parse as one
    (job.trials_dir / "e.spec.json").write_text(entry("e", "done", "success"))
    (job.trials_dir / "e.out.json").write_text(entry("e", "done", "success"))
    (job.trials_dir / "f.json").write_text("{broken")
    assert _job_counts(job) == (4, "failed 1, pending 1, success 2")


def test_the_retry_lines() -> None:
    assert _retry_lines(JobOutcome(total=3, already_done=0)) == []
    outcome = JobOutcome(
        total=3, already_done=1, retried=["a", "b"], final={"a": "done", "b": "error", "c": "error"}
    )
    assert _retry_lines(outcome) == [
        "retried 2 earlier infrastructure error(s): 1 recovered, 1 not",
        "2 trial(s) of this job are infrastructure errors; fix the cause (the job's ledger "
        "names it) and run the same command again",
    ]
