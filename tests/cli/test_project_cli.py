"""The project root seen from the command line; --version; help; run.json's sandboxes;
jobs beside the results; and the test suite's indifference to the caller's environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness import __version__
from harness.cli import app
from harness.cli.doctor import project_checks
from harness.config.settings import VARIABLES, Settings
from tests.cli.test_cli_errors import GOOD_FILES, SOLUTION, scenario_yaml
from tests.conftest import CLI, REPO_ROOT, make_bundle


def _invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def calc(project: Path, tmp_path: Path) -> Path:
    folder = project / "scenarios" / "t" / "calc"
    folder.mkdir(parents=True)
    sha = make_bundle(tmp_path / "src", folder / "repo.bundle", GOOD_FILES)
    (folder / "solution.patch").write_text(SOLUTION)
    (folder / "scenario.yml").write_text(scenario_yaml(sha))
    return folder


@pytest.mark.unit
def test_outside_a_project_commands_say_where_they_looked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "nowhere"
    empty.mkdir()
    monkeypatch.chdir(empty)
    for args in (["scenarios"], ["validate"], ["exec", "--agent", "oracle", "smoke/py-fast"]):
        code, out, err = _invoke(*args)
        assert code == 2, (args, out, err)
        assert "no agents.yml in" in err and str(empty.resolve()) in err and "HARNESS_HOME" in err
        assert len(err.strip().splitlines()) == 1
    assert not any(empty.iterdir())  # nothing written
    checks = project_checks(Settings.from_env())
    assert [(c.name, c.ok) for c in checks] == [("project root", False)]


@pytest.mark.unit
def test_home_or_a_subfolder_finds_the_project(
    project: Path, calc: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(calc)  # deep inside the project
    code, out, _ = _invoke("scenarios")
    assert code == 0 and out.startswith("t/calc")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.setenv("HARNESS_HOME", str(project))
    code, out, _ = _invoke("scenarios")
    assert code == 0 and out.startswith("t/calc")
    names = {c.name: c.ok for c in project_checks(Settings.from_env())}
    assert names == {"project root": True, "agents/llms": True, "scenarios": True}


@pytest.mark.unit
def test_an_empty_scenario_folder_is_an_error(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)
    code, _, err = _invoke("scenarios")
    assert code == 2 and "no scenarios found" in err


@pytest.mark.integration
def test_version_and_help(cli: CLI) -> None:
    assert _invoke("--version")[:2] == (0, f"harness {__version__}\n")
    help_ = cli("exec", "--help")
    assert help_.returncode == 0
    assert "<bool>" not in help_.stdout and "--record" in help_.stdout
    text = " ".join(help_.stdout.split())
    assert "oracle" in text and "nop" in text  # the project's agents


def _exec_locally(project: Path) -> Path:
    code, out, err = _invoke("exec", "--agent", "oracle", "--sandbox", "local", "t/calc")
    assert code == 0, out + err
    (run_json,) = (project / "results").rglob("run.json")
    return run_json


@pytest.mark.integration
def test_run_json_records_each_phase_sandbox(
    calc: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)
    meta = json.loads(_exec_locally(project).read_text())
    assert meta["sandbox"] == "local" and meta["sandboxes"] == {"agent": "local", "verify": "local"}


@pytest.mark.integration
@pytest.mark.docker
def test_run_json_says_docker_for_a_verify_in_docker(
    calc: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests._docker import client_or_skip

    client_or_skip()
    monkeypatch.chdir(project)
    run_json = _exec_locally(project)
    code, out, err = _invoke("verify", "--sandbox", "docker", "t/calc")
    assert code == 0, out + err
    meta = json.loads(run_json.read_text())
    assert meta["sandboxes"] == {"agent": "local", "verify": "docker"}


@pytest.mark.integration
def test_run_writes_jobs_beside_the_results(
    cli: CLI, calc: Path, project: Path, tmp_path: Path
) -> None:
    results = tmp_path / "elsewhere" / "results"
    args = ["run", "--agents", "nop", "--scenarios", "t/calc", "--sandbox", "local", "--job", "j"]
    done = cli(*args, env={"HARNESS_RESULTS": str(results), "PYTHONPATH": str(REPO_ROOT)})
    assert done.returncode == 0, done.stderr + done.stdout
    assert (results / "jobs" / "j" / "job.json").is_file()
    assert not (project / "jobs").exists()
    # from another folder of the same project, the same job is found (and is complete)
    again = cli(*args, env={"HARNESS_RESULTS": str(results)}, cwd=calc)
    assert again.returncode == 0 and "1 already complete" in again.stdout, again.stdout


@pytest.mark.integration
def test_suite_ignores_a_hostile_environment(tmp_path: Path) -> None:
    """Every HARNESS_*/GOAGENTBENCH_* set to a trap: the tests still pass, the traps stay
    untouched (pytest in a subprocess, on tests that run harness commands end to end)."""
    hostile = tmp_path / "hostile"
    env = dict(os.environ)
    for key in VARIABLES:
        for prefix in ("HARNESS_", "GOAGENTBENCH_"):
            env[prefix + key] = str(hostile / (prefix + key))
    env["HARNESS_SKIP_REMOTE"] = env["GOAGENTBENCH_SKIP_REMOTE"] = "0"
    env["HARNESS_BASE_ROUTE"] = "hostile"
    tests = [
        "tests/cli/test_cli_errors.py::test_setup_sees_seed",  # `harness setup` in a subprocess
        # exec, in-process:
        "tests/cli/test_project_cli.py::test_run_json_records_each_phase_sandbox",
        "tests/cli/test_project_cli.py::test_home_or_a_subfolder_finds_the_project",
    ]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests],
        cwd=REPO_ROOT,
        env={**env, "PYTHONPATH": str(REPO_ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "3 passed" in done.stdout
    assert not hostile.exists()
