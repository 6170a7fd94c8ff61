"""The trial commands' own work (cli/trial.py): the report printed safely, the exit code
from the outcome, verify's copy-only and report-only modes; the trial is a stand-in."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

import harness.cli.trial as trial_cli
import harness.trial.gab_modes as gab_modes

pytestmark = pytest.mark.unit


def run_dir(tmp_path: Path, report: str) -> Path:
    (tmp_path / "verify").mkdir(parents=True)
    (tmp_path / "verify" / "report.txt").write_text(report)
    return tmp_path


@pytest.mark.parametrize(
    "outcome,code", [("success", 0), ("failed", 1), ("timeout", 1), ("error", 3)]
)
def test_the_exit_code_follows_the_outcome(outcome: str, code: int) -> None:
    assert trial_cli._exit_code(outcome) == code


def invoke_verify(monkeypatch: pytest.MonkeyPatch, result: Any, *args: str) -> Any:
    seen: list[Any] = []

    def verify(loaded: Any, settings: Any, sandbox: str, copy_only: bool) -> Any:
        seen.append((loaded, sandbox, copy_only))
        return result

    monkeypatch.setattr(trial_cli, "verify", verify)
    monkeypatch.setattr(trial_cli, "load_named", lambda name: f"loaded:{name}")
    monkeypatch.setattr(trial_cli, "current_settings", lambda: None)
    app = typer.Typer()
    app.command()(trial_cli.verify_cmd)
    got = CliRunner().invoke(app, ["py/x", *args])
    got.seen = seen
    return got


def test_verify_prints_the_report_without_terminal_controls(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    result = SimpleNamespace(
        run_dir=run_dir(tmp_path, "final 0.5\x1b]0;owned\x07\n"), outcome="failed"
    )
    got = invoke_verify(monkeypatch, result, "--sandbox", "local")
    assert got.exit_code == 1
    assert "\x1b" not in got.output and "final 0.5" in got.output
    assert got.output.endswith(f"result: {tmp_path}\n")
    assert got.seen == [("loaded:py/x", "local", False)]


def test_verify_copy_only_says_what_it_did(monkeypatch: pytest.MonkeyPatch) -> None:
    got = invoke_verify(monkeypatch, None, "--copy-only", "--sandbox", "local")
    assert got.exit_code == 0 and "hidden files copied into the workspace" in got.output
    assert got.seen == [("loaded:py/x", "local", True)]


def test_verify_only_report_writes_nothing_and_exits_by_its_outcome(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    graded = SimpleNamespace(text="error: verifier crashed\n", outcome="error")
    monkeypatch.setattr(gab_modes, "report_only", lambda loaded, settings, sandbox: graded)
    got = invoke_verify(monkeypatch, "unused", "--only-report", "--sandbox", "local")
    assert got.exit_code == 3 and got.output == "error: verifier crashed\n"
    assert got.seen == []  # no verification written


def test_a_bad_sandbox_is_refused_before_verifying(monkeypatch: pytest.MonkeyPatch) -> None:
    got = invoke_verify(monkeypatch, None, "--sandbox", "nowhere")
    assert got.exit_code == 2 and got.seen == []
