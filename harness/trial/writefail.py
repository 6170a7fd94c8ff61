"""A write that fails mid-trial (a full disk, a read-only or vanished results folder) is
the machine's fault: the run is recorded as ``error`` with its cause, or, when not even
that can be written, removed, so no run is left half-written (``verify: running`` for
ever). Either way the caller gets one line, never a traceback, and exit 3."""

from __future__ import annotations

import errno
import shutil
from typing import Any, Protocol

from harness.errors import InfraError
from harness.results import RunDir
from harness.trial.reporting import Reported, trial_report
from harness.trial.result import TrialResult
from harness.util import trialgit
from harness.util.fs import write_atomic, write_json
from harness.verify.outcome import VerifyOutcome


class Trial(Reported, Protocol):
    """What recording a failed write reads and does of a trial (``trial.Trial``)."""

    @property
    def run(self) -> RunDir | None: ...

    def log(self, event: str, **fields: Any) -> None: ...

    def _gab_progress(self, *, write: bool = False) -> dict[str, Any] | None: ...


# what a run can lose and still say why it is an error (the agent's output, the diff, the
# gateway's records, the verifier's evidence)
BULKY = ("agent", "gateway", "workspace.diff", "verify/evidence", "verify/report.txt")
FIX = "free space there (df -h; harness images prune; old results), then run again"


def write_cause(exc: OSError) -> str:
    """The failed write on one line: what failed, and where."""
    what = "the disk is full" if exc.errno in (errno.ENOSPC, errno.EDQUOT) else "a write failed"
    where = f" ({exc.filename})" if exc.filename else ""
    return f"{what}: {exc.strerror or exc}{where}"


def record_failed_write(trial: Trial, exc: OSError, pointer: str) -> TrialResult:
    """The trial's run recorded as ``error`` with the cause of ``exc``; when that cannot be
    written either, the run folder (and the workspace's pointer to it) is removed and an
    ``InfraError`` says so."""
    cause = write_cause(exc)
    run, meta = trial.run, trial.meta
    if run is None or meta is None:  # nothing of a run was written yet
        raise InfraError(cause, field="(trial)", fix=FIX) from exc
    for attempt in range(2):
        try:
            return _record(trial, cause)
        except Exception:  # still no room: drop the run's bulky parts, then try once more
            if attempt == 0:
                for name in BULKY:
                    target = run.path / name
                    if target.is_dir():
                        shutil.rmtree(target, ignore_errors=True)
                    else:
                        target.unlink(missing_ok=True)
                continue
        # the disk is still full: leave nothing half-written
    shutil.rmtree(run.path, ignore_errors=True)
    (trialgit.private_dir(trial.workspace) / pointer).unlink(missing_ok=True)
    raise InfraError(
        f"{cause}; the run could not be recorded, so its folder was removed",
        file=run.path,
        field="(run)",
        fix=FIX,
    ) from exc


def _record(trial: Trial, cause: str) -> TrialResult:
    """Close the open phases as ``error`` and write the error report."""
    run = trial.run
    assert run is not None
    for phase in run.phases:
        if phase.outcome is None or phase.outcome == "running":
            run.end(phase, "error", cause)
    run.save_progress()  # again: an earlier try may have set the phases, then failed
    last = next((p for p in reversed(run.phases) if p.name == "agent"), None)
    ungraded = VerifyOutcome.ungraded(error=cause)
    report, text = trial_report(trial, trial._gab_progress(), ungraded, "error", last, {})
    write_json(run.verify_dir / "report.json", report)
    write_atomic(run.verify_dir / "report.txt", text)
    trial.log("error", phase="write", error=cause)
    trial.log("end", outcome="error")
    return TrialResult("error", run.path, report, text)
