"""``harness validate`` and ``harness scenarios``: every scenario checked with one line each
(an invalid one exit 2, the others still said valid), the list with version, type and
properties, a broken scenario listed as INVALID."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from harness.cli.scenarios import scenarios_cmd, validate
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.unit


def _app() -> typer.Typer:
    app = typer.Typer()
    app.command("validate")(validate)
    app.command("scenarios")(scenarios_cmd)
    return app


@pytest.fixture
def root(project: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    scenarios = project / "scenarios"
    for name in ("smoke/a", "smoke/b"):
        shutil.copytree(REPO_ROOT / "scenarios" / "smoke" / "py-fast", scenarios / name)
    monkeypatch.chdir(project)
    monkeypatch.setenv("HARNESS_SKIP_REMOTE", "1")
    return scenarios


def test_validate_says_each_and_exits_2_on_an_invalid_one(root: Path) -> None:
    out = CliRunner().invoke(_app(), ["validate"])
    assert out.exit_code == 0, out.output
    assert out.stdout.splitlines() == ["valid   smoke/a", "valid   smoke/b"]
    (root / "smoke" / "b" / "scenario.yml").write_text("name: b\n")
    out = CliRunner().invoke(_app(), ["validate"])
    assert out.exit_code == 2 and out.stdout.splitlines() == ["valid   smoke/a"]
    assert out.stderr.startswith("invalid smoke/b: ") and out.stderr.count("\n") == 1


def test_the_list_shows_version_type_and_properties(root: Path) -> None:
    out = CliRunner().invoke(_app(), ["scenarios"])
    assert out.exit_code == 0, out.output
    first = out.stdout.splitlines()[0].split()
    assert first[0] == "smoke/a" and first[1] == "v1.0.0" and first[2] == "fix-bug"
    (root / "smoke" / "b" / "scenario.yml").write_text("name: b\n")
    lines = CliRunner().invoke(_app(), ["scenarios"]).stdout.splitlines()
    assert lines[1].startswith("smoke/b") and " INVALID " in lines[1]


def test_no_scenarios_is_one_line_and_exit_2(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)
    for command in ("validate", "scenarios"):
        out = CliRunner().invoke(_app(), [command])
        assert out.exit_code == 2 and "no scenarios found" in out.stderr, command
