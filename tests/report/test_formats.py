"""``report --format``: each built-in format loads from the registry and writes its document."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from harness.report.collect import RunResult
from harness.report.formats import BUILTIN, REPORT_FORMATS
from harness.report.summary import summarise

pytestmark = pytest.mark.unit


def _run(agent: str, outcome: str) -> RunResult:
    return RunResult(
        run_dir=Path("/nowhere"),
        run_id=f"go/x-{agent}",
        scenario="go/x",
        era="tests@1.0.0",
        agent=agent,
        agent_version="1",
        model="m1",
        outcome=outcome,
        score=1.0 if outcome == "success" else 0.0,
        partial_score=None,
        started_at="2030-01-01T00:00:00",
        wall_s=2.0,
        usage={"cost_usd": 0.5},
    )


def _emit(name: str, capsys: pytest.CaptureFixture[str]) -> str:
    tables = summarise([_run("oracle", "success"), _run("nop", "failed")])
    REPORT_FORMATS.load(name)(tables, "2030-01-02T00:00:00", False)
    return capsys.readouterr().out


def test_every_builtin_format_resolves_to_its_function() -> None:
    assert list(BUILTIN) == ["table", "csv", "json", "md"]
    for name, spec in BUILTIN.items():
        assert REPORT_FORMATS.load(name).__name__ == spec.split(":")[1]


def test_json_holds_the_era_and_when_it_was_generated(capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads(_emit("json", capsys))
    assert doc["generated_at"] == "2030-01-02T00:00:00"
    assert [e["era"] for e in doc["eras"]] == ["tests@1.0.0"]


def test_csv_has_one_row_per_agent(capsys: pytest.CaptureFixture[str]) -> None:
    rows = list(csv.DictReader(io.StringIO(_emit("csv", capsys))))
    assert sorted((r["agent"], r["success"]) for r in rows) == [("nop", "0"), ("oracle", "1")]


def test_markdown_and_table_name_the_era_and_both_agents(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for name in ("md", "table"):
        out = _emit(name, capsys)
        assert "tests@1.0.0" in out and "oracle" in out and "nop" in out, name
        assert ("**era `tests@1.0.0`**" in out) == (name == "md"), name
