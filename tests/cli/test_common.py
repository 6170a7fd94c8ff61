"""The CLI's help touches: ``--agent``'s help lists the project's agents (and says why it
cannot), and a flag shows no value type."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from harness.cli.common import agents_help, quiet_flag_types
from harness.config.settings import Settings

pytestmark = pytest.mark.unit


def test_agent_help_lists_the_project_s_agents(project: Path, tmp_path: Path) -> None:
    text = agents_help(Settings.from_env(project))
    assert text.startswith("a name from agents.yml: ") and "nop" in text and "oracle" in text
    names = text.split(": ", 1)[1].split(", ")
    assert names == sorted(names)
    (project / "agents.yml").write_text("agents: 3\n")
    assert agents_help(Settings.from_env(project)).startswith(
        "a name from agents.yml (unreadable: "
    )
    empty = tmp_path / "elsewhere"
    empty.mkdir()
    assert agents_help(Settings.from_env(empty, {})).endswith(
        "(no project found: set HARNESS_HOME)"
    )


def test_a_flag_shows_no_value_type() -> None:
    quiet_flag_types()
    quiet_flag_types()  # once patched, left alone
    app = typer.Typer()

    @app.command()
    def run(record: bool = typer.Option(False, "--record"), name: str = typer.Option("x")) -> None:
        """Run."""

    out = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "120", "NO_COLOR": "1"}).stdout
    record = next(line for line in out.splitlines() if "--record" in line)
    name = next(line for line in out.splitlines() if "--name" in line)
    assert "<bool>" not in record and "<str>" in name  # a value-taking option keeps its type
