"""``harness mutants``: the tally printed, survivors named, exit 1 while any survives;
``--sample`` checked before anything runs."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from harness.cli.mutants import mutants_command
from harness.grader.mutants import run as mutants_run
from harness.grader.mutants.score import MutationScore
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.unit


def _app() -> typer.Typer:
    app = typer.Typer()
    app.command()(mutants_command)
    return app


@pytest.fixture
def here(project: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copytree(
        REPO_ROOT / "scenarios" / "smoke" / "py-fast", project / "scenarios" / "smoke" / "x"
    )
    monkeypatch.chdir(project)
    return project


def _fake(score: MutationScore, seen: dict[str, Any]) -> Any:
    def run_mutants(loaded: Any, settings: Any, sandbox: str, **kw: Any) -> SimpleNamespace:
        seen.update(kw, sandbox=sandbox, name=loaded.name)
        return SimpleNamespace(lines=[1, 2, 3], reused=1, score=score)

    return run_mutants


def test_survivors_are_named_and_exit_1(here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}
    score = MutationScore(killed=["a"], survived=["b"], killed_equivalent=["c"])
    monkeypatch.setattr(mutants_run, "run_mutants", _fake(score, seen))
    out = CliRunner().invoke(
        _app(), ["smoke/x", "--sample", "3", "--sandbox", "local", "--no-reuse"]
    )
    assert out.exit_code == 1, out.output
    lines = out.stdout.splitlines()
    assert lines[0] == "== smoke/x: 3 mutants scored (1 from the ledger)"
    assert lines[1] == score.line()
    assert lines[2:] == ["  survived: b", "  killed though triaged equivalent: c"]
    assert (seen["size"], seen["sandbox"], seen["reuse"]) == (3, "local", False)


def test_all_killed_is_exit_0(here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mutants_run, "run_mutants", _fake(MutationScore(killed=["a"]), {}))
    assert CliRunner().invoke(_app(), ["smoke/x", "--sandbox", "local"]).exit_code == 0


def test_a_sample_below_one_is_refused(here: Path) -> None:
    out = CliRunner().invoke(_app(), ["smoke/x", "--sample", "0"])
    assert out.exit_code == 2 and "--sample must be at least 1" in out.stderr
