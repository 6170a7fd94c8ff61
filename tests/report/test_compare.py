"""``harness report`` and ``harness compare`` end to end on synthetic result folders:
paired ranks, shared-set notes, the MDE line, goagentbench's --limit, --all-agent-versions
and --include-tokens, --job, --tasks-after and --power."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from harness.cli.report import compare_command, report_command
from tests.support.jobs_agents import write_result

pytestmark = pytest.mark.unit


def _app() -> typer.Typer:
    app = typer.Typer()
    app.command("report")(report_command)
    app.command("compare")(compare_command)
    return app


@pytest.fixture
def results(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    res = tmp_path / "results"
    monkeypatch.setenv("HARNESS_RESULTS", str(res))
    monkeypatch.setenv("HARNESS_SCENARIO_ROOT", str(tmp_path / "scenarios"))
    monkeypatch.chdir(tmp_path)
    return res


def _run(*args: str, code: int = 0) -> str:
    out = CliRunner().invoke(_app(), list(args))
    assert out.exit_code == code, out.output
    return out.stdout if code == 0 else out.output  # notes (the selection) go to stderr


def _entrants(*args: str) -> list[dict[str, Any]]:
    out = CliRunner().invoke(_app(), ["report", "--format", "json", *args])
    assert out.exit_code == 0, out.output
    eras = json.loads(out.stdout)["eras"]  # notes go to stderr
    assert len(eras) == 1
    entrants: list[dict[str, Any]] = eras[0]["entrants"]
    return entrants


def _patch(run: Path, **fields: Any) -> None:
    """Set fields in a synthetic run's run.json and report.json."""
    for rel in ("run.json", "verify/report.json"):
        path = run / rel
        data = json.loads(path.read_text())
        data.update(fields)
        path.write_text(json.dumps(data))


def _controls(results: Path, nop_scenarios: int) -> None:
    """oracle 7/7, nop 0/N, and a one-run entrant: today's nop-tied-with-oracle case."""
    n = 0
    for s in range(7):
        write_result(results, f"py/s{s}", f"r-or-{n:02d}", agent="oracle", score=1.0)
        n += 1
    for s in range(nop_scenarios):
        write_result(
            results, f"py/s{s}", f"r-nop-{n:02d}", agent="nop", score=0.0, outcome="failed"
        )
        n += 1
    write_result(results, "py/s0", f"r-one-{n:02d}", agent="one", score=0.5, outcome="failed")


def test_a_single_run_entrant_no_longer_ties_nop_with_oracle(results: Path) -> None:
    _controls(results, nop_scenarios=7)
    data = _entrants()
    # "one" ran a single scenario: no test could place it, so it is shown apart, last
    assert [(e["agent"], e["rank"]) for e in data] == [("oracle", 1), ("nop", 2), ("one", 0)]
    assert data[2]["vs_above"] == "too few runs"
    nop = data[1]
    assert nop["separably_better"] == ["oracle 1.0 + none"]
    # the line reads nop minus oracle: nop did better on none, oracle on all 7
    assert "diff -1.000" in nop["vs_above_detail"]
    assert "McNemar b=0 c=7" in nop["vs_above_detail"]
    table = _run("report")
    assert "minimum detectable difference (80% power, alpha 0.05, paired, T=" in table
    assert "different scenario sets" in table  # "one" ran a single scenario
    assert "shown apart, unranked (too few runs): one 1.0 + none" in table


def test_too_few_shared_scenarios_tie_and_the_table_says_why(results: Path) -> None:
    _controls(results, nop_scenarios=5)
    data = _entrants()
    nop = next(e for e in data if e["agent"] == "nop")
    assert nop["rank"] == 1 and nop["vs_above"] == "not measurable"
    assert "vs oracle 1.0 + none: 5 shared" in nop["vs_above_detail"]
    assert "McNemar b=0 c=5 p=0.0625" in nop["vs_above_detail"]
    text = _run("report")
    assert "1 of 7 shared by all" in text and "6 needed" in text


def test_compare_prints_the_pair_in_full(results: Path) -> None:
    scores_a = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2]
    for i, s in enumerate(scores_a):
        write_result(results, f"py/s{i}", f"r-a-{i:02d}", agent="alpha", score=s)
        write_result(results, f"py/s{i}", f"r-b-{i + 20:02d}", agent="beta", score=s - 0.1)
    write_result(results, "py/extra", "r-b-40", agent="beta", score=1.0)
    out = _run("compare", "alpha", "beta:none")
    assert "shared scenarios: 8 (A ran 8, B ran 9; compared only on the scenarios both ran)" in out
    assert "paired bootstrap over scenarios" in out and "correlation of per-scenario scores" in out
    assert "minimum detectable difference (80% power, alpha 0.05, paired, T=8)" in out
    assert "verdict: separable" in out
    (doc,) = json.loads(_run("compare", "alpha@1.0:none", "beta", "--format", "json"))
    assert doc["paired"]["diff"] == pytest.approx(0.1) and doc["paired"]["a_better"] == 8
    assert doc["paired"]["p"] == pytest.approx(2 / 256)
    assert doc["b_shared_mean"] == pytest.approx(0.45)  # beta on the shared set only
    err = _run("compare", "alpha", "gamma", code=2)
    assert "no era where both" in err


def test_limit_and_all_agent_versions_follow_goagentbench(results: Path) -> None:
    for i, (version, score) in enumerate([("1.0.0", 0.2), ("1.2.0", 0.6), ("1.10.0", 0.9)]):
        run = write_result(results, "py/a", f"r-v-{i:02d}", agent="alpha", score=score)
        _patch(run, agent_version=version)
    newest = _entrants()
    assert [(e["agent_version"], e["score_mean"]) for e in newest] == [("1.10.0", 0.9)]
    merged = _entrants("--all-agent-versions")  # one row per agent and model
    assert [e["agent_version"] for e in merged] == ["1.0.0,1.2.0,1.10.0"]
    assert merged[0]["score_mean"] == pytest.approx(0.9)  # --limit 1: the newest run
    three = _entrants("--all-agent-versions", "--limit", "3")[0]
    assert three["score_mean"] == pytest.approx((0.2 + 0.6 + 0.9) / 3) and three["trials"] == 3
    out = CliRunner().invoke(_app(), ["report", "--limit", "0"])
    assert out.exit_code == 2 and "--limit" in out.output


def test_an_infra_error_never_displaces_the_agents_newest_result(results: Path) -> None:
    write_result(results, "py/a", "r-a-01", agent="alpha", score=0.7)
    write_result(results, "py/a", "r-a-02", agent="alpha", outcome="error")
    (e,) = _entrants()
    assert (e["runs"], e["infra_errors"], e["score_mean"]) == (1, 1, 0.7)
    assert e["score_errors_as_zero"] == pytest.approx(0.35)  # shown both ways


def test_include_tokens_adds_the_token_columns(results: Path) -> None:
    write_result(results, "py/a", "r-a-01", agent="alpha", usage={"prompt_tokens": 1200})
    plain = next(csv.reader(io.StringIO(_run("report", "--format", "csv"))))
    assert "avg_tok_input" not in plain and "success_rate" in plain
    rows = list(csv.DictReader(io.StringIO(_run("report", "--format", "csv", "--include-tokens"))))
    assert rows[0]["avg_tok_input"] == "1200"  # goagentbench's CSV (report.gabcsv)
    data = json.loads(_run("report", "--format", "json"))["eras"][0]["entrants"]
    assert data[0]["prompt_tokens"] == 1200.0
    assert "tok in" in _run("report", "--include-tokens") and "tok in" not in _run("report")


def test_job_keeps_only_that_jobs_runs_and_all_its_repetitions(results: Path) -> None:
    for i, score in enumerate([1.0, 0.0, 1.0]):
        outcome = "success" if score else "failed"
        run = write_result(
            results, "py/a", f"r-j-{i:02d}", agent="alpha", score=score, outcome=outcome
        )
        _patch(run, job="job-1", repetition=i)
    write_result(results, "py/a", "r-x-09", agent="alpha", score=0.5)  # another job's run
    (e,) = _entrants("--job", "job-1")
    assert e["trials"] == 3 and e["score_mean"] == pytest.approx(2 / 3)
    assert e["pass_hat_k"] == 0.0 and e["pass_at_k"] == 1.0
    assert _entrants()[0]["score_mean"] == 0.5  # without --job: the newest run
    assert "no finished runs of job 'nope'" in _run("report", "--job", "nope", code=2)


def test_tasks_after_keeps_tasks_dated_after_and_counts_the_undated(
    results: Path, tmp_path: Path
) -> None:
    for name, date in (("go/old", "2023-05-01"), ("go/new", "2025-03-02"), ("go/nodate", None)):
        folder = tmp_path / "scenarios" / name
        folder.mkdir(parents=True)
        extra = f"task-date: {date}\n" if date else ""
        (folder / "scenario.yml").write_text(f"name: {name}\n{extra}")
        write_result(results, name, f"r-{name[3:]}-01", agent="alpha", score=1.0)
    (e,) = _entrants("--tasks-after", "2024-12-31")
    assert e["scenarios"] == 1
    out = CliRunner().invoke(_app(), ["report", "--tasks-after", "2024-12-31"])
    assert "1 scenario(s) without a task date left out (go/nodate)" in out.output
    assert _entrants()[0]["scenarios"] == 3
    assert "not an ISO date" in _run("report", "--tasks-after", "soon", code=2)


def test_power_says_how_many_scenarios_and_trials_a_difference_needs(results: Path) -> None:
    out = _run("report", "--power", "0.1")  # no results: the planning defaults
    assert "to detect a difference of 0.10 at 80% power" in out and "1 trial(s): 197" in out
    for i in range(10):
        write_result(results, f"py/s{i}", f"r-a-{i:02d}", agent="alpha", score=0.5 + i / 40)
        write_result(results, f"py/s{i}", f"r-b-{i + 20:02d}", agent="beta", score=0.4 + i / 30)
    out = _run("report", "--power", "0.05")
    assert "era tests@1.0.0 (2 entrant(s), 10 scenario(s))" in out
    assert "variances observed in these results" in out
    assert "power" in _run("report", "--power", "2", code=2)


def test_identical_entrants_have_a_detectable_difference_not_zero(results: Path) -> None:
    """Issue 50: alike scores make the paired differences constant (variance 0); the MDE
    is then the planning variance's 2.80 * sqrt(0.25 / 8) = 0.495, not 0.000."""
    for i in range(8):
        score = [0.9, 0.1, 0.6, 0.3, 1.0, 0.0, 0.7, 0.4][i]
        write_result(results, f"py/s{i}", f"r-a-{i:02d}", agent="alpha", score=score)
        write_result(results, f"py/s{i}", f"r-b-{i + 20:02d}", agent="beta", score=score)
    (doc,) = json.loads(_run("compare", "alpha", "beta", "--format", "json"))
    assert doc["paired"]["mde"] == pytest.approx(2.8016 * math.sqrt(0.25 / 8), abs=1e-3)
    assert "0.495 (planning variance 0.25" in _run("compare", "alpha", "beta")
    table = json.loads(_run("report", "--format", "json"))["eras"][0]
    assert table["mde"] == pytest.approx(0.495, abs=1e-3)
    power = _run("report", "--power", "0.2")
    assert "planning" in power or "scenarios" in power


def test_vs_above_reads_in_the_direction_printed(results: Path) -> None:
    """Issue 50: "beta vs alpha: diff" is beta minus alpha (by hand: 8 scenarios where
    alpha leads by 0.583 on average)."""
    alpha = [1.0, 0.9, 0.8, 1.0, 0.9, 1.0, 0.8, 0.9]
    beta = [0.4, 0.3, 0.2, 0.5, 0.3, 0.4, 0.2, 0.3]
    for i, (a, b) in enumerate(zip(alpha, beta, strict=True)):
        write_result(results, f"py/s{i}", f"r-a-{i:02d}", agent="alpha", score=a)
        write_result(results, f"py/s{i}", f"r-b-{i + 20:02d}", agent="beta", score=b)
    diff = sum(b - a for a, b in zip(alpha, beta, strict=True)) / 8  # beta - alpha
    beta_row = _entrants()[1]
    assert beta_row["agent"] == "beta"
    assert f"diff {diff:+.3f}" in beta_row["vs_above_detail"] and diff < 0
    assert f"beta 1.0 + none vs alpha 1.0 + none: 8 shared, diff {diff:+.3f}" in _run("report")


def test_an_entrant_with_one_run_is_shown_apart_not_first(results: Path) -> None:
    """Issue 50: one success on one scenario (mean 1.0) beside entrants with 8 scenarios
    is not ranked first: it is listed after them, unranked."""
    for i in range(8):
        write_result(results, f"py/s{i}", f"r-a-{i:02d}", agent="alpha", score=0.8)
        write_result(results, f"py/s{i}", f"r-b-{i + 20:02d}", agent="beta", score=0.6)
    write_result(results, "py/s0", "r-l-40", agent="lucky", score=1.0)
    data = _entrants()
    assert [e["agent"] for e in data] == ["alpha", "beta", "lucky"]
    assert data[2]["rank"] == 0 and data[2]["vs_above"] == "too few runs"
    table = _run("report")
    first_row = next(line for line in table.splitlines() if "alpha" in line or "lucky" in line)
    assert "alpha" in first_row
