"""Setting up a workspace: a fresh clone with the setup steps applied and committed as the
baseline, its state kept out of the agent's reach, a failed setup leaving nothing behind."""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

import pytest

from harness.errors import UserError
from harness.scenario.load import load_scenario
from harness.trial.workspace import STATE, read_state, setup, write_state
from tests.support.calc import project_settings, write_calc

pytestmark = pytest.mark.unit

STEPS = "setup:\n  exec: ['printf %s \"$HARNESS_SEED\" > seen.txt', 'echo made > made.txt']\n"


def _git(ws: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=ws, capture_output=True, text=True).stdout.strip()


def test_setup_runs_its_steps_and_commits_them_as_the_baseline(
    project: Path, tmp_path: Path
) -> None:
    write_calc(project, tmp_path / "src", extra=STEPS)
    settings = project_settings(project)
    loaded = load_scenario("t/calc", settings.scenario_root)
    ws = setup(loaded, settings, seed="5ec2e75eed")
    assert ws == project / "workspace" / "t" / "calc"
    assert (ws / "seen.txt").read_text() == "5ec2e75eed"  # the steps see the secret seed
    assert (ws / "made.txt").read_text() == "made\n" and _git(ws, "status", "--porcelain") == ""
    state = read_state(ws, loaded)
    assert state.baseline == _git(ws, "rev-parse", "HEAD") != state.commit == loaded.scenario.commit
    assert state.seed == loaded.seed != "5ec2e75eed"  # only the public seed is recorded
    assert not list(ws.parent.glob(".setup-*"))  # no staging left


def test_the_workspace_s_own_state_file_is_not_trusted(project: Path, tmp_path: Path) -> None:
    write_calc(project, tmp_path / "src")
    settings = project_settings(project)
    loaded = load_scenario("t/calc", settings.scenario_root)
    ws = setup(loaded, settings)
    state = read_state(ws, loaded)
    forged = dataclasses.replace(state, contaminated=True)
    (ws / STATE).write_text(
        (ws / STATE).read_text().replace('"contaminated": false', '"contaminated": true')
    )
    assert read_state(ws, loaded) == state  # harness's own copy decides
    write_state(ws, forged)  # harness itself marks it (verify --copy-only)
    with pytest.raises(UserError, match="hidden verification files"):
        read_state(ws, loaded)


def test_a_failed_setup_leaves_nothing_and_an_unset_workspace_is_named(
    project: Path, tmp_path: Path
) -> None:
    write_calc(project, tmp_path / "src", extra="setup:\n  exec: ['exit 7']\n")
    settings = project_settings(project)
    loaded = load_scenario("t/calc", settings.scenario_root)
    with pytest.raises(UserError):
        setup(loaded, settings)
    assert not (project / "workspace").exists()
    with pytest.raises(UserError, match="workspace is not set up") as info:
        read_state(project / "workspace" / "t" / "calc", loaded)
    assert info.value.fix == "run `harness setup t/calc`"
