"""One workspace's trial (trial/trial.py): a whole local trial with the built-in agents,
the run it leaves for the separate commands, a second run refused, its budget and labels.
The phases in depth are the other tests of tests/trial/."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from harness.config.budget import Budget
from harness.config.entrants import Registry
from harness.config.settings import Settings
from harness.errors import UserError
from harness.scenario.load import load_scenario
from harness.trial.commands import execute
from harness.trial.entrant import RunOptions
from harness.trial.hooks import read_log
from harness.trial.trial import Trial
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.integration

SMOKE = "smoke/py-fast"


def settings_for(project: Path) -> Settings:
    return dataclasses.replace(
        Settings.from_env(project),
        scenario_root=REPO_ROOT / "scenarios",
        results=project / "results",
        workspace=project / "ws",
    )


@pytest.mark.parametrize("agent,outcome", [("oracle", "success"), ("nop", "failed")])
def test_a_local_trial_runs_whole_and_leaves_its_run(
    project: Path, agent: str, outcome: str
) -> None:
    settings = settings_for(project)
    loaded = load_scenario(SMOKE, settings.scenario_root)
    result = execute(loaded, settings, Registry.load(project), RunOptions(agent, sandbox="local"))
    assert result.outcome == outcome, result.text
    events = [e["event"] for e in read_log(result.run_dir)]
    assert events[:2] == ["start", "setup"] and events[-2:] == ["verdict", "end"]
    trial = Trial.open(loaded, settings, "local")
    assert trial.run is not None and trial.run.path == result.run_dir
    assert trial.meta is not None and trial.meta.agent == agent
    assert trial.meta.scenario == SMOKE and trial.meta.scenario_sha == loaded.sha256
    assert trial.workspace.is_dir()
    with pytest.raises(UserError, match="already has a run"):
        trial.check_fresh()
    labels = trial._labels("verify")
    assert labels == {"harness.trial": trial.run.run_id, "harness.job": "",
                      "harness.phase": "verify"}  # fmt: skip


def test_a_fresh_workspace_has_no_run_and_merges_its_budget(project: Path) -> None:
    settings = settings_for(project)
    loaded = load_scenario(SMOKE, settings.scenario_root)
    trial = Trial.setup(loaded, settings, "local", None)
    assert trial.run is None and trial.meta is None
    trial.check_fresh()  # nothing to refuse
    assert trial.budget(RunOptions("oracle")) == loaded.scenario.budget
    merged = trial.budget(RunOptions("oracle", budget=Budget(calls=3)))
    assert merged.calls == 3 and merged.tokens == loaded.scenario.budget.tokens
    assert trial.secret_seed() == trial.secret_seed() and trial.secret_seed()
