"""Typed settings: one default per setting, GOAGENTBENCH_* aliases, JSON round trip,
and no environment read outside settings.py."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from harness.config.settings import Settings, env_value
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.unit


def make_project(root: Path) -> Path:
    (root / "scenarios").mkdir(parents=True)
    (root / "agents.yml").write_text("agents: []\n")
    (root / "llms.yml").write_text("llms: []\n")
    return root


def test_defaults_derive_from_the_project_root(tmp_path: Path) -> None:
    root = make_project(tmp_path / "proj")
    deep = root / "scenarios" / "a" / "b"
    deep.mkdir(parents=True)
    s = Settings.from_env(cwd=deep, environ={})
    assert s.project_found and s.project_root == root.resolve()
    assert s.workspace == root.resolve() / "workspace"
    assert s.results == root.resolve() / "results"
    assert s.scenario_root == root.resolve() / "scenarios"
    assert s.jobs_dir == s.results / "jobs"  # jobs live beside the results they describe
    assert s.fleet_file == root.resolve() / "fleet.yml"
    assert s.repo_cache is None and s.skip_remote is False


def test_variables_override_and_jobs_follow_results(tmp_path: Path) -> None:
    root = make_project(tmp_path / "proj")
    env = {"HARNESS_RESULTS": str(tmp_path / "r"), "HARNESS_WORKSPACE": str(tmp_path / "w")}
    s = Settings.from_env(cwd=root, environ=env)
    assert s.results == tmp_path / "r" and s.workspace == tmp_path / "w"
    assert s.jobs_dir == tmp_path / "r" / "jobs"
    s = Settings.from_env(cwd=root, environ={**env, "HARNESS_JOBS": str(tmp_path / "j")})
    assert s.jobs_dir == tmp_path / "j"


def test_goagentbench_names_are_aliases_and_harness_wins(tmp_path: Path) -> None:
    root = make_project(tmp_path / "proj")
    gab = {
        "GOAGENTBENCH_WORKSPACE": str(tmp_path / "gw"),
        "GOAGENTBENCH_RESULTS": str(tmp_path / "gr"),
        "GOAGENTBENCH_SCENARIO_ROOT": str(tmp_path / "gs"),
        "GOAGENTBENCH_SKIP_REMOTE": "1",
    }
    s = Settings.from_env(cwd=root, environ=gab)
    assert (s.workspace, s.results, s.scenario_root) == (
        tmp_path / "gw",
        tmp_path / "gr",
        tmp_path / "gs",
    )
    assert s.skip_remote is True
    s = Settings.from_env(cwd=root, environ={**gab, "HARNESS_RESULTS": str(tmp_path / "hr")})
    assert s.results == tmp_path / "hr"
    # an empty value counts as unset; "0"/"false" switch a flag off
    s = Settings.from_env(cwd=root, environ={"HARNESS_RESULTS": "", "HARNESS_SKIP_REMOTE": "0"})
    assert s.results == root.resolve() / "results" and s.skip_remote is False
    assert env_value("HARNESS_RESULTS", gab) == env_value("RESULTS", gab) == str(tmp_path / "gr")


def test_settings_travel_as_json(tmp_path: Path) -> None:
    root = make_project(tmp_path / "proj")
    s = Settings.from_env(cwd=root, environ={"HARNESS_REPO_CACHE": str(tmp_path / "c")})
    assert Settings.from_json(json.loads(json.dumps(s.as_json()))) == s
    # the six fields older callers pass still build a complete Settings
    short = Settings(
        workspace=tmp_path / "w",
        results=tmp_path / "r",
        scenario_root=tmp_path / "s",
        repo_cache=None,
        skip_remote=True,
        project_root=tmp_path,
    )
    assert short.jobs_dir == tmp_path / "r" / "jobs" and short.fleet_file == tmp_path / "fleet.yml"
    # dataclasses.replace validates, and a derived default follows what it derives from
    moved = dataclasses.replace(short, results=str(tmp_path / "r2"))  # type: ignore[arg-type]
    assert moved.results == tmp_path / "r2" and moved.jobs_dir == tmp_path / "r2" / "jobs"


def test_one_fleet_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.fleet.config import default_fleet_path

    root = make_project(tmp_path / "proj")
    monkeypatch.chdir(root)
    assert default_fleet_path() == Settings.from_env().fleet_file == root.resolve() / "fleet.yml"
    monkeypatch.setenv("HARNESS_FLEET", str(tmp_path / "f.yml"))
    assert default_fleet_path() == Settings.from_env().fleet_file == tmp_path / "f.yml"


ENV_READ = re.compile(r"os\.environ\.get\(|os\.environ\[|getenv\(|environ\.get\(")


def test_no_environment_read_outside_settings() -> None:
    """Every setting goes through harness/settings.py (passing os.environ on is fine)."""
    offenders = [
        f"{path.relative_to(REPO_ROOT)}:{n}"
        for path in sorted((REPO_ROOT / "harness").rglob("*.py"))
        if path.name != "settings.py"
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if ENV_READ.search(line)
    ]
    assert offenders == [], "read settings via harness.config.settings (env_value, read_env)"
