"""Locked means locked: ``exec``, ``setup`` and ``run`` refuse a locked scenario whose folder
changed since it was locked, with one line naming the fix (`harness bump`), exit 2, and
before anything is written (no workspace, no run folder, no job folder)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, run_harness

pytestmark = pytest.mark.integration


@pytest.fixture
def changed(project: Path, tmp_path: Path) -> dict[str, str]:
    shutil.copytree(REPO_ROOT / "scenarios/smoke/py-fast", project / "scenarios/smoke/py-fast")
    env = {
        "HARNESS_RESULTS": str(tmp_path / "results"),
        "HARNESS_JOBS": str(tmp_path / "jobs"),
        "HARNESS_WORKSPACE": str(tmp_path / "ws"),
    }
    locked = run_harness(project, "lock", "smoke/py-fast", env=env)
    assert locked.returncode == 0, locked.stderr
    yml = project / "scenarios/smoke/py-fast/scenario.yml"
    yml.write_text(yml.read_text().replace("Fix it.", "Fix it, please."))
    return env


@pytest.mark.parametrize(
    "args",
    [
        ["exec", "smoke/py-fast", "--agent", "nop", "--sandbox", "local"],
        ["setup", "smoke/py-fast"],
        ["run", "--agents", "nop", "--scenarios", "smoke/py-fast", "--sandbox", "local"],
    ],
    ids=["exec", "setup", "run"],
)
def test_a_changed_locked_scenario_is_refused_before_anything_is_written(
    args: list[str], project: Path, tmp_path: Path, changed: dict[str, str]
) -> None:
    done = run_harness(project, *args, env=changed)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "is locked and its folder changed" in lines[0]
    assert "harness bump smoke/py-fast" in lines[0]
    for written in ("results", "jobs", "ws"):
        assert not (tmp_path / written).exists(), written
