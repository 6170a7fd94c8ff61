"""Era tables rendered as CSV, JSON, Markdown and a terminal table; the cell texts."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from harness.report.collect import RunResult
from harness.report.render import (
    CSV_FIELDS,
    TOKEN_FIELDS,
    print_tables,
    rank_text,
    score_text,
    to_csv,
    to_json,
    to_markdown,
    vs_above_text,
)
from harness.report.stats import NOT_MEASURABLE, TOO_FEW
from harness.report.summary import EraTable, summarise

pytestmark = pytest.mark.unit


def _run(era: str, agent: str, scenario: str, score: float) -> RunResult:
    return RunResult(
        run_dir=Path("/nowhere"),
        run_id=f"{era}-{agent}-{scenario}",
        scenario=scenario,
        era=era,
        agent=agent,
        agent_version="1",
        model="m1",
        outcome="success" if score >= 0.5 else "failed",
        score=score,
        partial_score=None,
        started_at="2030-01-01T00:00:00",
        wall_s=2.0,
        usage={"cost_usd": 0.5, "prompt_tokens": 1000},
    )


def _tables() -> list[EraTable]:
    runs = [_run("tests@1", a, s, v) for a, v in (("a", 1.0), ("b", 0.0)) for s in ("x", "y")]
    return summarise([*runs, _run("tests@2", "a", "x", 1.0)])


def test_csv_carries_the_era_on_every_row_and_tokens_only_when_asked() -> None:
    rows = list(csv.DictReader(io.StringIO(to_csv(_tables()))))
    assert [(r["era"], r["agent"]) for r in rows] == [
        ("tests@1", "a"),
        ("tests@1", "b"),
        ("tests@2", "a"),
    ]
    assert list(rows[0]) == list(CSV_FIELDS) and rows[0]["prompt_tokens"] == "1000.0"
    header = to_csv(_tables(), include_tokens=False).splitlines()[0].split(",")
    assert not set(TOKEN_FIELDS) & set(header) and "cost_usd" in header


def test_json_and_markdown_keep_eras_apart() -> None:
    doc = json.loads(to_json(_tables(), "now"))
    assert [(e["era"], len(e["entrants"])) for e in doc["eras"]] == [("tests@1", 2), ("tests@2", 1)]
    md = to_markdown(_tables(), include_tokens=False)
    assert md.count("**era `") == 2 and "tok in" not in md
    assert "tok in" in to_markdown(_tables())


def test_cell_texts() -> None:
    e = _tables()[0].entrants[0]
    assert score_text(e) == f"{e.score.mean:.3f} ± {e.score.se:.3f}"
    assert score_text(dataclasses.replace(e, score=dataclasses.replace(e.score, mean=None))) == "-"
    assert rank_text(dataclasses.replace(e, rank=2, vs_above=NOT_MEASURABLE)) == "=2"
    assert rank_text(dataclasses.replace(e, rank=2, vs_above=TOO_FEW)) == "-"
    below = dataclasses.replace(e, vs_above="below", vs_above_p=0.0123)
    assert vs_above_text(below) == "below (p=0.012)"


def test_a_table_not_on_a_terminal_is_printed_whole() -> None:
    long_name = "agent-" + "x" * 150
    out = io.StringIO()
    print_tables(summarise([_run("tests@1", long_name, "x", 1.0)]), Console(file=out, width=40))
    assert long_name in out.getvalue() and "…" not in out.getvalue()
    empty = io.StringIO()
    print_tables([], Console(file=empty))
    assert "no results" in empty.getvalue()
