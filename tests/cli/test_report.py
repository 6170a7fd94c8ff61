"""``harness report``, ``board`` and ``view`` on a project with no results
(cli/report.py): refusals before anything is written, where it looked, the board's server.
Reports over real runs are tests/report/'s."""

from __future__ import annotations

import urllib.request
from pathlib import Path
from threading import Thread
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

import harness.cli.report as report_cli

pytestmark = pytest.mark.unit


@pytest.fixture
def home(project: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HARNESS_HOME", str(project))
    monkeypatch.chdir(project)
    return project


def invoke(command: Any, *args: str) -> Any:
    app = typer.Typer()
    app.command()(command)
    return CliRunner().invoke(app, list(args))


def test_an_empty_report_says_where_it_looked(home: Path) -> None:
    got = invoke(report_cli.report_command)
    assert got.exit_code == 0, got.output
    assert f"note: read the runs under {home / 'results'}" in got.output


@pytest.mark.parametrize(
    "args,said",
    [
        (["--power", "0"], "--power 0.0 is not a difference in (0, 1]"),
        (["--power", "1.5"], "is not a difference"),
        (["--format", "xml"], "xml"),
    ],
)
def test_bad_options_are_exit_2(home: Path, args: list[str], said: str) -> None:
    got = invoke(report_cli.report_command, *args)
    assert got.exit_code == 2 and said in got.output


def test_publishing_nothing_is_refused_and_writes_nothing(home: Path) -> None:
    readme = home / "README.md"
    text = "# x\n<!-- BEGIN_RESULTS -->\n<!-- END_RESULTS -->\n"
    readme.write_text(text)
    got = invoke(report_cli.report_command, "--publish")
    assert got.exit_code == 2 and "no results to publish" in got.output
    assert not (home / "result_summaries").exists()
    assert readme.read_text() == text


def test_view_of_an_unknown_run_is_exit_2(home: Path) -> None:
    got = invoke(report_cli.view_command, "no-such-run")
    assert got.exit_code == 2 and "no run 'no-such-run'" in got.output


def test_the_board_is_written_and_served_on_loopback(home: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    got = invoke(report_cli.board_command, "--out", str(out))
    assert got.exit_code == 0 and got.output.startswith(f"board: {out / 'index.html'} (0 runs;")
    server = report_cli.serve(out, 0)
    host, port = server.server_address[:2]
    Thread(target=server.serve_forever, daemon=True).start()
    try:
        assert host == "127.0.0.1"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/index.html", timeout=10) as page:
            assert page.status == 200 and b"<html" in page.read().lower()
    finally:
        server.shutdown()
        server.server_close()
