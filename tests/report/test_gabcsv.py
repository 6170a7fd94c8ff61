"""``report --format csv`` is goagentbench's report CSV (issue 50): its header, its columns,
its rounding, its order and its quoting, on runs whose figures are computed by hand."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from harness.cli.report import report_command
from harness.report.collect import RunResult
from harness.report.gabcsv import cell, gab_csv, number, versions_text
from tests.support.jobs_agents import write_result

pytestmark = pytest.mark.unit

# goagentbench internal/report/report.go WriteCSV, word for word
GAB_HEADER = (
    "agent,model,agent_version,unique_scenarios,count,success,partial_success_score,"
    "success_rate,partial_success_rate,avg_cost,avg_time"
)
GAB_TOKENS = (
    ",avg_tok_input,avg_tok_cached_input,avg_tok_write_cached_input,avg_tok_output,avg_tok_total"
)


def _run(
    scenario: str,
    agent: str,
    outcome: str,
    *,
    model: str = "m1",
    partial: float | None = None,
    cost: float = 0.0,
    wall: float | None = None,
    version: str = "1.0.0",
    usage: dict[str, float] | None = None,
) -> RunResult:
    return RunResult(
        run_dir=Path("/nowhere"),
        run_id=f"{scenario}-{agent}-{outcome}",
        scenario=scenario,
        era="tests@1.0.0",
        agent=agent,
        agent_version=version,
        model=model,
        outcome=outcome,
        score=None,
        partial_score=partial,
        started_at="2030-01-01T00:00:00",
        wall_s=wall,
        usage={"cost_usd": cost, **(usage or {})},
    )


def test_numbers_round_as_goagentbench_s_format_float() -> None:
    cases = [(0, "0"), (1, "1"), (0.5, "0.5"), (2 / 3, "0.67"), (1.005, "1.01"), (0.125, "0.13")]
    cases += [(-0.001, "0"), (-1.005, "-1.01"), (12.3456, "12.35"), (0.004, "0"), (100, "100")]
    assert [number(v) for v, _ in cases] == [want for _, want in cases]


def test_cells_quote_as_go_s_encoding_csv() -> None:
    assert [cell(c) for c in ["a", "", "a,b", 'say "x"', " lead", "\\.", "1.0.0,2.0.0"]] == [
        "a",
        "",
        '"a,b"',
        '"say ""x"""',
        '" lead"',
        '"\\."',
        '"1.0.0,2.0.0"',
    ]


def test_versions_semver_first_in_version_order() -> None:
    assert versions_text(["1.10.0", "v1.2.0", "beta", "1.2.0-rc1", "1.10.0"]) == (
        "1.2.0-rc1,v1.2.0,1.10.0,beta"
    )


def test_rows_by_hand() -> None:
    runs = [
        # alpha: 3 runs on 2 scenarios, 1 success; partials 1 (its success), 0.5, 0
        _run("a", "alpha", "success", cost=0.30, wall=10.0, usage={"prompt_tokens": 1000}),
        _run("a", "alpha", "failed", partial=0.5, cost=0.0, wall=20.0),
        _run("b", "alpha", "failed", cost=0.20, wall=None, usage={"prompt_tokens": 3000}),
        _run("b", "alpha", "error", cost=9.0, wall=99.0),  # the harness's fault: not counted
        # beta: 2 runs, 2 successes: ranked first
        _run("a", "beta", "success", wall=3.0),
        _run("b", "beta", "success", partial=1.0, wall=4.0),
        # gamma with two models: same rates, ordered by model
        _run("a", "gamma", "failed", model="z"),
        _run("a", "gamma", "failed", model="y"),
    ]
    lines = gab_csv(runs).splitlines()
    assert lines == [
        GAB_HEADER,
        "beta,m1,1.0.0,2,2,2,2,1,1,0,3.5",
        # partial sum 1 + 0.5 + 0 = 1.5; rates 1/3, 0.5; cost avg of 0.30 and 0.20 (zero
        # skipped); time avg of 10 and 20 (unknown skipped)
        "alpha,m1,1.0.0,2,3,1,1.5,0.33,0.5,0.25,15",
        "gamma,y,1.0.0,1,1,0,0,0,0,0,0",
        "gamma,z,1.0.0,1,1,0,0,0,0,0,0",
    ]
    tokens = gab_csv(runs, include_tokens=True).splitlines()
    assert tokens[0] == GAB_HEADER + GAB_TOKENS
    # input = prompt - cached; total = prompt + output; averages skip the zeros
    assert tokens[2].endswith(",2000,0,0,0,2000")


def test_the_cli_writes_goagentbench_s_csv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    res = tmp_path / "results"
    monkeypatch.setenv("HARNESS_RESULTS", str(res))
    monkeypatch.chdir(tmp_path)
    write_result(res, "py/a", "r-a-01", agent="alpha", usage={"prompt_tokens": 1200})
    app = typer.Typer()
    app.command("report")(report_command)
    app.command("noop")(lambda: None)
    out = CliRunner().invoke(app, ["report", "--format", "csv"])
    assert out.exit_code == 0, out.output
    rows = list(csv.reader(io.StringIO(out.stdout)))
    assert ",".join(rows[0]) == GAB_HEADER
    assert rows[1][:6] == ["alpha", "none", "1.0", "1", "1", "1"]
    out = CliRunner().invoke(app, ["report", "--format", "csv", "--include-tokens"])
    assert out.stdout.splitlines()[0] == GAB_HEADER + GAB_TOKENS
