"""The import paths from before the layout move (issue 21) still work, with a warning."""

from __future__ import annotations

import importlib
import subprocess
import sys
import warnings

import pytest

pytestmark = pytest.mark.unit

# old path, a name it had, the module that defines that name now
MOVED = [
    ("harness.settings", "Settings", "harness.config.settings"),
    ("harness.settings", "read_env", "harness.config.settings"),
    ("harness.registry", "Registry", "harness.config.entrants"),
    ("harness.workspace", "setup", "harness.trial.workspace"),
    ("harness.controls", "run_controls", "harness.grader.controls"),
    ("harness.controls", "grader_verdict", "harness.verify.proof"),
    ("harness.proof_env", "environment", "harness.verify.proof"),
    ("harness.project", "project_checks", "harness.cli.doctor"),
    ("harness.project", "require_project", "harness.config.project"),
    ("harness.fleet.gateway", "build_config", "harness.gateway"),
    ("harness.fleet.gateway.keys", "load_keys", "harness.gateway.keys"),
    ("harness.fleet.testserver", "main", "harness.testing.lmstudio.__main__"),
    ("harness.fleet.container", "TrialGateway", "harness.backends.docker.gateway"),
    ("harness.fleet.container", "ROUTER_ENV", "harness.fleet.router_service"),
    ("harness.fleet.container", "gateway_files", "harness.gateway.files"),
    ("harness.fleet.shared", "job_router", "harness.fleet.router_service"),
    ("harness.images.cli", "doctor_checks", "harness.cli.doctor"),
    ("harness.images.inject", "inject_harness_source", "harness.sandbox.inject"),
    ("harness.job.executor", "GRACE_S", "harness.job.executors.base"),
    ("harness.verify.results", "VerifyOutcome", "harness.verify.outcome"),
    ("harness.scoring.controls", "broken_checks", "harness.scoring.verdicts"),
    ("harness.sandbox.policy", "SandboxPolicy", "harness.scenario.policy"),
    ("harness.toolchain", "GO_RELEASES", "harness.provision.toolchain"),
]


@pytest.mark.parametrize(("old", "name", "home"), MOVED)
def test_old_path_warns_and_gives_the_same_object(old: str, name: str, home: str) -> None:
    module = importlib.import_module(old)
    with pytest.warns(DeprecationWarning, match=f"import {name} from"):
        value = getattr(module, name)
    assert value is getattr(importlib.import_module(home), name)


def test_old_path_says_where_an_unknown_name_went() -> None:
    module = importlib.import_module("harness.settings")
    with pytest.raises(AttributeError, match=r"harness\.config\.settings"):
        _ = module.no_such_name


def test_the_packages_that_replaced_modules_keep_their_names() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning: these paths did not move
        from harness.results import RunDir
        from harness.scenario import LoadedScenario, load_scenario
        from harness.trial import RunOptions, execute, seed

    assert load_scenario.__module__ == "harness.scenario.model"
    assert LoadedScenario.__module__ == "harness.scenario.model"
    assert execute.__module__ == "harness.trial.trial"
    assert RunOptions.__module__ == "harness.trial.entrant"  # also importable from .trial
    assert seed.__name__ == "harness.trial.seed"
    assert RunDir.__module__ == "harness.results"


def test_old_module_entry_point_still_runs() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "harness.fleet.testserver", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "usage: python -m harness.testing.lmstudio" in done.stdout
    assert "deprecated" in done.stderr
