"""Locked means locked: ``exec``, ``setup`` and ``run`` refuse a locked scenario whose folder
changed since it was locked, with one line naming the fix (`harness bump`), exit 2, and
before anything is written (no workspace, no run folder, no job folder); every shipped
locked version is its folder as committed; the lock file is read strictly and written in
one order."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness.errors import UserError
from harness.scenario.load import list_scenarios, load_scenario
from harness.scenario.lock import HEADER, lock_path, lock_status, read_lock, write_lock
from tests.conftest import REPO_ROOT, run_harness

SCENARIOS = REPO_ROOT / "scenarios"


@pytest.mark.unit
def test_every_shipped_locked_version_is_its_folder_as_committed() -> None:
    # a locked line taken before a last edit of the folder (a README's State, a defect's
    # breaks:) is refused by every command that runs the scenario; catch it here, at once
    locked = read_lock(SCENARIOS)
    changed = []
    for name in list_scenarios(SCENARIOS):
        loaded = load_scenario(name, SCENARIOS)
        if lock_status(loaded, SCENARIOS) == "changed":
            changed.append(f"{name}@{loaded.version}")
    assert len(locked) >= 10 and changed == []


@pytest.mark.unit
def test_the_lock_file_is_read_strictly_and_written_in_one_order(tmp_path: Path) -> None:
    write_lock(tmp_path, {"go/b@1.0.0": "b" * 64, "apps/a@2.0.0": "a" * 64})
    text = lock_path(tmp_path).read_text()
    assert text == HEADER + f"apps/a@2.0.0 {'a' * 64}\ngo/b@1.0.0 {'b' * 64}\n"
    assert read_lock(tmp_path) == {"apps/a@2.0.0": "a" * 64, "go/b@1.0.0": "b" * 64}
    lock_path(tmp_path).write_text(text + "go/c@1.0.0 short\n")
    with pytest.raises(UserError, match="line 6 is not"):
        read_lock(tmp_path)


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


@pytest.mark.integration
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
