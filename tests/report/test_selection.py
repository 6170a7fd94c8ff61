"""One count everywhere: ``board``, ``report`` and ``compare`` read the same runs by
default, each says which selection it used, and ``compare`` gives the MDE ``report``
gives for the same pair (issue 49, item 6)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from harness.cli.report import board_command, compare_command, report_command
from tests.support.jobs_agents import write_result

pytestmark = pytest.mark.unit


def _app() -> typer.Typer:
    app = typer.Typer()
    app.command("report")(report_command)
    app.command("compare")(compare_command)
    app.command("board")(board_command)
    return app


@pytest.fixture
def results(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    res = tmp_path / "results"
    monkeypatch.setenv("HARNESS_RESULTS", str(res))
    monkeypatch.setenv("HARNESS_SCENARIO_ROOT", str(tmp_path / "scenarios"))
    monkeypatch.chdir(tmp_path)
    n = 0
    for s in range(8):  # three repetitions each of two entrants on eight scenarios
        for rep in range(3):
            a = 1.0 if (s + rep) % 3 else 0.0
            b = 1.0 if s % 4 == 0 else 0.0
            for agent, score in (("alpha", a), ("beta", b)):
                outcome = "success" if score else "failed"
                write_result(
                    res, f"py/s{s}", f"r-{n:02d}", agent=agent, score=score, outcome=outcome
                )
                n += 1
    return res


def _invoke(*args: str) -> tuple[str, str]:
    out = CliRunner().invoke(_app(), list(args))
    assert out.exit_code == 0, out.output
    return out.stdout, out.stderr


def test_board_report_and_compare_count_the_same_runs_and_say_which(
    results: Path, tmp_path: Path
) -> None:
    stdout, stderr = _invoke("report", "--format", "json")
    entrants = json.loads(stdout)["eras"][0]["entrants"]
    counted = sum(e["runs"] + e["infra_errors"] for e in entrants)
    assert counted == 16  # the newest run per scenario, agent and model
    assert "selection: the newest run per scenario, agent and model" in stderr
    board_out, _ = _invoke("board", "--out", str(tmp_path / "site"))
    assert "(16 runs; selection: the newest run per scenario, agent and model" in board_out
    index = (tmp_path / "site" / "index.html").read_text()
    assert "16 run(s); selection: the newest run per scenario" in index
    assert len(list((tmp_path / "site" / "runs").glob("*.html"))) == 16
    _, compare_err = _invoke("compare", "alpha", "beta")
    assert "selection: the newest run per scenario, agent and model" in compare_err
    every, err = _invoke("report", "--format", "json", "--all-runs")
    assert sum(e["runs"] for e in json.loads(every)["eras"][0]["entrants"]) == 48
    assert "selection: every run (all repetitions)" in err
    board_all, _ = _invoke("board", "--out", str(tmp_path / "all"), "--all-runs")
    assert "(48 runs; selection: every run" in board_all


@pytest.mark.parametrize("extra", [[], ["--all-runs"]])
def test_compare_gives_the_mde_report_gives_for_the_same_pair(
    results: Path, extra: list[str]
) -> None:
    report, _ = _invoke("report", *extra)
    compare, _ = _invoke("compare", "alpha", "beta", *extra)
    pattern = r"minimum detectable difference \(80% power, alpha 0.05, paired, T=(\d+)\): ([\d.]+)"
    found_report = re.search(pattern, report)
    found_compare = re.search(pattern, compare)
    assert found_report and found_compare, (report, compare)
    assert found_report.groups() == found_compare.groups()
    (doc,) = json.loads(_invoke("compare", "alpha", "beta", "--format", "json", *extra)[0])
    assert f"{doc['paired']['mde']:.3f}" == found_report.group(2)


def test_too_few_shared_scenarios_give_no_mde_in_either(results: Path) -> None:
    scenarios = ["--scenarios", "py/s0,py/s1,py/s2"]
    report, _ = _invoke("report", *scenarios)
    compare, _ = _invoke("compare", "alpha", "beta", *scenarios)
    for text in (report, compare):
        assert "minimum detectable difference: none (no exact paired test" in text


def test_with_three_entrants_compare_names_the_tables_mde_too(results: Path) -> None:
    for s in range(8):
        score = 1.0 if s % 2 else 0.0
        outcome = "success" if score else "failed"
        write_result(
            results, f"py/s{s}", f"r-g{s:02d}", agent="gamma", score=score, outcome=outcome
        )
    report, _ = _invoke("report")
    compare, _ = _invoke("compare", "alpha", "beta")
    table = re.search(r"paired, T=\d+\): ([\d.]+)", report)
    assert table is not None
    assert f"`harness report` prints the era table's, over 3 entrants: {table.group(1)})" in compare
