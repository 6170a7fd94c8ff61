"""The ``harness mine`` command: its flags checked, the miner called, the funnel printed
(cli/mine.py); the miner is a stand-in here."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

import harness.cli.mine as mine_cli

pytestmark = pytest.mark.unit


@pytest.fixture
def called(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    seen: list[tuple[str, Any]] = []

    def fake(repo: str, options: Any, settings: Any, progress: Any) -> Any:
        seen.append((repo, options))
        progress("walking")
        counts = {"walked": 9, "shape": 4, "proven": 2, "drafted": 1}
        return SimpleNamespace(counts=lambda: counts)

    monkeypatch.setattr(mine_cli, "mine", fake)
    return seen


def invoke(*args: str) -> Any:
    app = typer.Typer()
    app.command()(mine_cli.mine_command)
    return CliRunner().invoke(app, list(args))


def test_the_miner_gets_the_options_and_the_funnel_is_printed(
    called: list[tuple[str, Any]], tmp_path: Path
) -> None:
    out = tmp_path / "drafts"
    got = invoke(
        "repo.bundle", "--out", str(out), "--since", "2024-01-01", "--limit", "5",
        "--sandbox", "local", "--commit", "abc", "--commit", "def", "--runs", "4",
        "--repo-name", "github.com/o/n",
    )  # fmt: skip
    assert got.exit_code == 0, got.output
    [(repo, options)] = called
    assert repo == "repo.bundle" and options.out == out.resolve()
    assert (options.since, options.limit, options.sandbox) == ("2024-01-01", 5, "local")
    assert (options.runs, options.repo_name, options.commits) == (
        4,
        "github.com/o/n",
        ("abc", "def"),
    )
    assert got.output.splitlines() == [
        "walking",
        "walked 9 -> shape 4 -> proven 2 -> drafted 1",
        f"funnel: {out.resolve() / 'funnel.md'}",
    ]


def test_the_defaults(called: list[tuple[str, Any]]) -> None:
    assert invoke("r").exit_code == 0
    options = called[0][1]
    assert options.out == Path("mined").resolve() and options.runs == 3
    assert options.sandbox == "docker" and options.commits == () and options.limit is None


@pytest.mark.parametrize(
    "args,said",
    [
        (["--limit", "0"], "--limit must be at least 1"),
        (["--runs", "1"], "give --runs 2 or more"),
        (["--sandbox", "nowhere"], "nowhere"),
    ],
)
def test_bad_flags_are_exit_2_before_any_mining(
    called: list[tuple[str, Any]], args: list[str], said: str
) -> None:
    got = invoke("r", *args)
    assert got.exit_code == 2 and said in got.output and called == []
