"""A full results disk, for real: a tiny tmpfs mounted as the results root (root only;
unmounted after). Whatever the instant the disk fills, a trial ends with exit 3 and one
line, never a traceback nor the agent-failure code, and leaves its run either recorded
as ``error`` with the cause (no phase left ``running``) or not at all."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.trial.writefail import write_cause
from tests.conftest import REPO_ROOT, run_harness


@pytest.fixture
def tiny(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Path]:
    mount = tmp_path / "disk"
    mount.mkdir()
    size = getattr(request, "param", "20k")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _env(project: Path, tmp_path: Path, disk: Path) -> dict[str, str]:
    shutil.copytree(REPO_ROOT / "scenarios/smoke/py-fast", project / "scenarios/smoke/py-fast")
    return {
        "HARNESS_RESULTS": str(disk / "results"),
        "HARNESS_WORKSPACE": str(tmp_path / "ws"),
        "HARNESS_JOBS": str(tmp_path / "jobs"),
        "HARNESS_MIN_FREE_MB": "0",  # past the preflight: the disk fills mid-trial
    }


def _runs(disk: Path) -> list[Path]:
    return [p.parent for p in (disk / "results").rglob("run.json")]


def _recorded_as_error(run: Path) -> None:
    report = json.loads((run / "verify" / "report.json").read_text())
    assert report["outcome"] == "error" and "disk is full" in report["error"]
    phases = json.loads((run / "progress.json").read_text())["phases"]
    assert all(p["outcome"] != "running" for p in phases), phases


@pytest.mark.parametrize("tiny", ["8k", "20k", "36k"], indirect=True)
@pytest.mark.integration
def test_a_full_disk_mid_trial_is_an_error_never_a_traceback(
    project: Path, tmp_path: Path, tiny: Path
) -> None:
    env = _env(project, tmp_path, tiny)
    done = run_harness(project, "exec", "smoke/py-fast", "--agent", "nop", "--sandbox", "local",
                       env=env)  # fmt: skip
    assert done.returncode == 3, done.stdout + done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    runs = _runs(tiny)
    if runs:
        assert len(runs) == 1
        _recorded_as_error(runs[0])
        assert "disk is full" in done.stdout
    else:
        lines = [ln for ln in done.stderr.splitlines() if "agent" not in ln and "verif" not in ln]
        assert len(lines) == 1 and "the disk is full" in lines[0], done.stderr
        assert "folder was removed" in lines[0]
        assert not os.listdir(tiny / "results" / "smoke" / "py-fast")


@pytest.mark.integration
def test_a_full_disk_in_a_job_is_an_infrastructure_error(
    project: Path, tmp_path: Path, tiny: Path
) -> None:
    env = _env(project, tmp_path, tiny)
    done = run_harness(project, "run", "--agents", "nop", "--scenarios", "smoke/py-fast",
                       "--sandbox", "local", "--job", "full", "--max-interruptions", "0",
                       env=env)  # fmt: skip
    assert done.returncode == 3, done.stdout + done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    entries = [
        json.loads(p.read_text())
        for p in (tmp_path / "jobs" / "full" / "trials").glob("*.json")
        if not p.name.endswith((".spec.json", ".out.json"))
    ]
    assert [e["status"] for e in entries] == ["error"]
    assert "disk is full" in entries[0]["detail"]
    for run in _runs(tiny):
        _recorded_as_error(run)


@pytest.mark.unit
def test_a_failed_write_is_one_line_naming_what_and_where() -> None:
    full = OSError(errno.ENOSPC, "No space left on device", "/results/x/report.json")
    assert write_cause(full) == "the disk is full: No space left on device (/results/x/report.json)"
    quota = OSError(errno.EDQUOT, "Disk quota exceeded")
    assert write_cause(quota) == "the disk is full: Disk quota exceeded"
    ro = OSError(errno.EROFS, "Read-only file system", "/results")
    assert write_cause(ro) == "a write failed: Read-only file system (/results)"
