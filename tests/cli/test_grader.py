"""``harness controls`` and ``calibrate``: each scenario's report printed, exit 1 when any
grader is not trusted or no bar can be proposed; no scenario named is one line, exit 2."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from harness.cli import grader
from harness.grader import calibrate as calibrate_module
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.unit


def _app() -> typer.Typer:
    app = typer.Typer()
    app.command("controls")(grader.controls_cmd)
    app.command("calibrate")(grader.calibrate_cmd)
    return app


@pytest.fixture
def here(project: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("smoke/a", "smoke/b"):
        shutil.copytree(REPO_ROOT / "scenarios" / "smoke" / "py-fast", project / "scenarios" / name)
    monkeypatch.chdir(project)
    return project


def test_controls_print_each_report_and_fail_on_an_untrusted_grader(
    here: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[str, str, bool]] = []

    def run_controls(loaded: Any, settings: Any, sandbox: str, **kw: Any) -> SimpleNamespace:
        seen.append((loaded.name, sandbox, kw["reuse"]))
        trusted = loaded.name == "smoke/a"
        return SimpleNamespace(trusted=trusted, text=lambda: f"verdict {trusted}")

    monkeypatch.setattr(grader, "run_controls", run_controls)
    out = CliRunner().invoke(
        _app(), ["controls", "smoke/a", "smoke/b", "--sandbox", "local", "--reuse"]
    )
    assert out.exit_code == 1, out.output
    assert out.stdout == "== smoke/a\nverdict True\n== smoke/b\nverdict False\n"
    assert seen == [("smoke/a", "local", True), ("smoke/b", "local", True)]
    ok = CliRunner().invoke(_app(), ["controls", "smoke/a", "--sandbox", "local"])
    assert ok.exit_code == 0


def test_controls_without_a_scenario_is_refused(here: Path) -> None:
    out = CliRunner().invoke(_app(), ["controls"])
    assert out.exit_code == 2 and "name the scenarios to prove" in out.stderr


def test_calibrate_fails_without_a_bar(here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bar: list[float | None] = [0.9]

    def calibrate(loaded: Any, settings: Any, sandbox: str, seeds: int, **kw: Any) -> Any:
        return f"{loaded.name} over {seeds} seeds\n", SimpleNamespace(bar=bar[0])

    monkeypatch.setattr(calibrate_module, "calibrate", calibrate)
    out = CliRunner().invoke(_app(), ["calibrate", "smoke/a", "--seeds", "5", "--sandbox", "local"])
    assert out.exit_code == 0 and out.stdout == "smoke/a over 5 seeds\n"
    bar[0] = None
    assert CliRunner().invoke(_app(), ["calibrate", "smoke/a", "--sandbox", "local"]).exit_code == 1
