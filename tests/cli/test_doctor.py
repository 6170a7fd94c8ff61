"""``harness doctor``: the project's root, registries and scenarios, each scenario's
repository cached or reachable, and one line per check with its fix, exit 1 on a miss."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from harness.cli import doctor
from harness.cli.doctor import Check, doctor_command, project_checks, repo_checks
from harness.config.settings import Settings
from tests.support.calc import write_calc

pytestmark = pytest.mark.unit


def test_the_project_s_registries_and_scenarios(project: Path) -> None:
    checks = {c.name: c for c in project_checks(Settings.from_env(project))}
    assert checks["project root"].ok and checks["agents/llms"].ok
    assert not checks["scenarios"].ok and checks["scenarios"].detail.startswith("0 under")
    (project / "llms.yml").write_text("llms: 3\n")
    broken = {c.name: c for c in project_checks(Settings.from_env(project))}["agents/llms"]
    assert not broken.ok and "llms.yml" in broken.detail and broken.fix == "fix that file"


def test_each_scenario_s_repository_can_clone_or_is_named(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HARNESS_SKIP_REMOTE", "1")
    write_calc(project, tmp_path / "src")  # a bundle beside it: clones
    settings = Settings.from_env(project)
    (ok,) = repo_checks(settings)
    assert ok.ok and ok.detail.startswith("1 scenarios can clone")
    remote = write_calc(project, tmp_path / "src2", name="remote")
    url = "https://example.invalid/r.git"
    text = (remote / "scenario.yml").read_text().replace("repo: repo.bundle", f"repo: {url}")
    (remote / "scenario.yml").write_text(text)
    head, line = repo_checks(settings)
    assert not head.ok and head.detail == "1 of 2 scenarios cannot clone their repository"
    assert line.name == "repo t/remote" and line.detail == f"{url}: not cached; HARNESS_SKIP_REMOTE"


def test_one_line_per_check_and_exit_1_on_a_miss(monkeypatch: pytest.MonkeyPatch) -> None:
    app = typer.Typer()
    app.command()(doctor_command)
    checks = [
        Check("docker", True, "29.0", "not shown when ok"),
        Check("go", False, "not found", "apt install golang"),
    ]
    monkeypatch.setattr(doctor, "doctor_checks", lambda address=None: checks)
    out = CliRunner().invoke(app, [])
    assert out.exit_code == 1
    assert out.stdout.splitlines() == [
        "ok   docker         29.0",
        "MISS go             not found  -> fix: apt install golang",
    ]
    monkeypatch.setattr(doctor, "doctor_checks", lambda address=None: checks[:1])
    assert CliRunner().invoke(app, []).exit_code == 0
