"""``harness report`` on synthetic result folders: eras apart, honest ranks, infra errors
in their own column, every format, and --publish."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from harness.cli.report import report_command
from tests.support.jobs_agents import write_result

pytestmark = pytest.mark.unit


def _app() -> typer.Typer:
    app = typer.Typer()
    app.command("report")(report_command)
    app.command("noop")(lambda: None)  # two commands keep "report" a subcommand
    return app


@pytest.fixture
def results(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    res = tmp_path / "results"
    monkeypatch.setenv("HARNESS_RESULTS", str(res))
    monkeypatch.chdir(tmp_path)
    return res


def _invoke(*args: str) -> str:
    out = CliRunner().invoke(_app(), ["report", *args])
    assert out.exit_code == 0, out.output
    return out.stdout  # notes (the selection) go to stderr


def test_two_eras_print_two_tables_and_errors_stand_apart(results: Path) -> None:
    for i, (agent, score) in enumerate([("good", 1.0), ("good", 0.9), ("bad", 0.1), ("bad", 0.0)]):
        write_result(
            results,
            "py/a",
            f"r-py-{i:02d}",
            agent=agent,
            score=score,
            outcome="success" if score > 0.5 else "failed",
        )
    write_result(
        results,
        "apps/x",
        "r-app-10",
        agent="good",
        era="x@1.0.0-rc",
        score=0.8,
        usage={"cost_usd": 0.5, "prompt_tokens": 1000},
    )
    write_result(results, "apps/x", "r-app-11", agent="good", era="x@1.0.0-rc", outcome="error")
    write_result(results, "smoke/s", "r-smoke-12", agent="good", era="smoke@1", score=0.0)
    text = _invoke("--format", "table")
    assert text.count("era ") == 2 and "era tests@1.0.0" in text and "era x@1.0.0-rc" in text
    assert "smoke" not in text

    data = json.loads(_invoke("--format", "json", "--limit", "9"))
    eras = {e["era"]: e["entrants"] for e in data["eras"]}
    assert set(eras) == {"tests@1.0.0", "x@1.0.0-rc"}
    assert [e["agent"] for e in eras["tests@1.0.0"]] == ["good", "bad"]
    app = eras["x@1.0.0-rc"][0]  # the infra error is in its own column, not a failure
    assert (app["runs"], app["infra_errors"], app["success_rate"]) == (1, 1, 1.0)
    assert app["cost_usd"] == 0.5 and app["prompt_tokens"] == 1000.0
    assert app["energy_kwh"] is None  # unknown stays unknown
    good = eras["tests@1.0.0"][0]  # two trials of one scenario: one cluster, SE unknown
    assert good["score_mean"] == pytest.approx(0.95) and good["score_se"] is None
    assert good["trials"] == 2 and good["pass_at_k"] == 1.0 and good["pass_hat_k"] == 1.0
    assert eras["tests@1.0.0"][1]["pass_at_k"] == 0.0
    newest = json.loads(_invoke("--format", "json"))["eras"]  # goagentbench's --limit 1
    assert newest[0]["entrants"][0]["score_mean"] == pytest.approx(0.9)

    rows = list(csv.DictReader(io.StringIO(_invoke("--format", "csv"))))
    # goagentbench's CSV: one row per agent and model, eras merged, the error not counted
    assert [(r["agent"], r["count"], r["success"]) for r in rows] == [
        ("good", "2", "2"),
        ("bad", "1", "0"),
    ]
    md = _invoke("--format", "md")
    assert md.count("**era `") == 2 and "| good |" in md
    assert "bad" not in _invoke("--format", "md", "--agents", "good")
    assert "x@1.0.0-rc" not in _invoke("--format", "md", "--scenarios", "py/*")


def test_overlapping_scores_are_not_measurable(results: Path) -> None:
    for i, score in enumerate([0.9, 0.5, 0.7]):
        write_result(results, "py/a", f"r-a-{i:02d}", agent="alpha", score=score)
    for i, score in enumerate([0.8, 0.4, 0.65]):
        write_result(results, "py/a", f"r-b-{i + 10:02d}", agent="beta", score=score)
    text = _invoke("--limit", "3")
    assert "not measurable" in text
    data = json.loads(_invoke("--format", "json", "--limit", "3"))["eras"][0]["entrants"]
    assert [e["rank"] for e in data] == [1, 1] and data[1]["vs_above"] == "not measurable"


def test_publish_writes_a_summary_folder_and_the_marked_block(
    results: Path, tmp_path: Path
) -> None:
    write_result(results, "py/a", "r-a-01", agent="alpha", score=1.0)
    readme = tmp_path / "README.md"
    readme.write_text("# T\n\nbefore\n<!-- BEGIN_RESULTS -->\nold\n<!-- END_RESULTS -->\nafter\n")
    _invoke("--publish")
    text = readme.read_text()
    assert "old" not in text and "| alpha |" in text
    assert text.startswith("# T\n\nbefore\n") and text.endswith("<!-- END_RESULTS -->\nafter\n")
    (folder,) = (tmp_path / "result_summaries").iterdir()
    assert folder.name.startswith("summary_")
    assert {p.name for p in folder.iterdir()} == {"summary.json", "summary.csv", "summary.md"}
    bare = tmp_path / "OTHER.md"
    bare.write_text("no markers\n")
    out = CliRunner().invoke(_app(), ["report", "--publish-to", str(bare)])
    assert out.exit_code == 2 and "BEGIN_RESULTS" in out.output


def test_tied_entrants_read_the_same_whatever_order_the_runs_came_in() -> None:
    """A job on a cluster finishes its trials in another order than a local job; the
    tables built from the same runs must not differ (ties placed in entrant order)."""
    from harness.report.collect import RunResult
    from harness.report.summary import summarise

    def run(agent: str, scenario: str, outcome: str) -> RunResult:
        score = 1.0 if outcome == "success" else 0.0
        return RunResult(
            Path("/nowhere"), f"{agent}-{scenario}", scenario, "tests@1.0.0", agent, "1.0",
            "none", outcome, score, None, "2026-01-01T00:00:00Z", 1.0,
        )  # fmt: skip

    runs = [
        run(agent, scenario, "success" if agent == "oracle" else "failed")
        for agent in ("oracle", "slownop", "nop")
        for scenario in ("a", "b")
    ]

    def order(rs: list[RunResult]) -> list[list[str]]:
        return [[e.agent for e in t.entrants] for t in summarise(rs)]

    assert order(runs) == order(list(reversed(runs))) == [["oracle", "nop", "slownop"]]


def test_publish_refuses_before_printing_anything(results: Path, tmp_path: Path) -> None:
    """A fresh clone's README has no markers: the refusal comes first, not after the
    whole table was printed (issue 49)."""
    write_result(results, "py/a", "r-a-01", agent="alpha", score=1.0)
    (tmp_path / "README.md").write_text("# a newcomer's page, no markers\n")
    out = CliRunner().invoke(_app(), ["report", "--publish"])
    assert out.exit_code == 2 and "BEGIN_RESULTS" in out.stderr
    assert out.stdout == ""  # nothing printed before the refusal
    assert not (tmp_path / "result_summaries").exists()
    empty = tmp_path / "EMPTY.md"
    empty.write_text("<!-- BEGIN_RESULTS -->\n<!-- END_RESULTS -->\n")
    out = CliRunner().invoke(_app(), ["report", "--publish-to", str(empty), "--agents", "zed"])
    assert out.exit_code == 2 and "no results to publish" in out.stderr


def test_a_piped_table_is_never_cut(results: Path) -> None:
    agent, model = "mini-swe-agent-with-a-long-name", "qwen3-coder-30b-a3b-instruct-q4_k_m"
    for i in range(3):
        usage = {"prompt_tokens": 1234567, "completion_tokens": 23456, "cost_usd": 0.1234}
        write_result(results, f"py/s{i}", f"r-a-{i:02d}", agent=agent, model=model, usage=usage)
    table = _invoke("--include-tokens")  # CliRunner's stdout is not a terminal
    assert "…" not in table
    assert agent in table and model in table and "1,234,567" in table and "vs above" in table


def test_a_failover_is_counted_in_the_report(results: Path) -> None:
    moved = {"calls": 3, "hosts": {"h1": 2, "h2": 2}, "failed_attempts": 1}
    write_result(results, "py/a", "r-a-01", agent="alpha", usage=moved)
    write_result(results, "py/b", "r-a-02", agent="alpha", usage={"calls": 2, "hosts": {"h1": 2}})
    text = _invoke()
    assert "alpha 1.0 + none: 1 run(s) failed over to another model host (r-a-01;" in text
    (entrant,) = json.loads(_invoke("--format", "json"))["eras"][0]["entrants"]
    assert entrant["failovers"] == 1
