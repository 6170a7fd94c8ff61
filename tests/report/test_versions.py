"""Scenario versions in summaries: each version of a scenario gets its own table."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.report.collect import RunResult
from harness.report.versions import base_name, table_keys, version_of


def _run(scenario: str, version: str) -> RunResult:
    return RunResult(
        run_dir=Path("."),
        run_id=f"{scenario}-{version}",
        scenario=scenario,
        era="tests-1",
        agent="a",
        agent_version="1",
        model="m",
        outcome="success",
        score=1.0,
        partial_score=1.0,
        started_at="",
        wall_s=1.0,
        report={"scenario_version": version},
    )


@pytest.mark.unit
def test_no_row_mixes_two_versions_of_a_scenario() -> None:
    from harness.report.summary import summarise

    runs = [_run("go/x", "1.0.0"), _run("go/x-1.1.0", "1.1.0"), _run("go/y", "1.0.0")]
    keys = table_keys(runs)
    assert keys[0] != keys[1] and keys[2] == "tests-1"
    for table in summarise(runs):
        for row in table.entrants:
            names = {r.split("-")[0] for r in row.run_ids if r.startswith("go/x")}
            assert len([r for r in row.run_ids if r.startswith("go/x")]) <= 1, names
    assert table_keys([_run("go/x", "1.0.0"), _run("go/y", "1.0.0")]) == ["tests-1"] * 2


@pytest.mark.unit
def test_a_version_comes_from_the_report_then_the_folder_name() -> None:
    assert base_name("go/wordfreq-1.2.0") == "go/wordfreq" and base_name("go/x") == "go/x"
    assert version_of(_run("go/x", "2.0.0")) == "2.0.0"
    bare = _run("go/x-1.3", "")
    assert version_of(bare) == "1.3"
    assert version_of(_run("go/x", "")) == "unknown"
