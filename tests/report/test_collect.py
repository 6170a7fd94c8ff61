"""Collecting runs for a report: read from run folders, smoke left out, filters, eras filled
in, the newest runs per entrant, agent versions kept apart, merged or newest only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.report.collect import NO_ERA, Filters, collect, read_run, scan, tasks_after
from tests.support.jobs_agents import write_result

pytestmark = pytest.mark.unit


def _set_version(run: Path, version: str) -> None:
    for name in ("run.json", "verify/report.json"):
        doc = json.loads((run / name).read_text())
        doc["agent_version"] = version
        (run / name).write_text(json.dumps(doc))


def test_a_run_folder_reads_as_a_record_and_a_folder_without_a_report_is_skipped(
    tmp_path: Path,
) -> None:
    run = write_result(tmp_path, "go/x", "r01", agent="oracle", model="m", wall_s=8.0)
    (tmp_path / "go" / "x" / "unfinished" / "verify").mkdir(parents=True)
    got = read_run(run)
    assert got is not None
    assert (got.scenario, got.agent, got.agent_version, got.model) == ("go/x", "oracle", "1.0", "m")
    assert got.outcome == "success" and got.score == 1.0 and got.wall_s == 4.0  # agent phase
    assert read_run(tmp_path / "go" / "x" / "unfinished") is None
    assert [r.run_id for r in scan(tmp_path)] == ["r01"] and scan(tmp_path / "none") == []


@pytest.mark.parametrize("use_index", [True, False])
def test_smoke_is_left_out_and_filters_match_globs(tmp_path: Path, use_index: bool) -> None:
    write_result(tmp_path, "smoke/py", "r01", agent="oracle")
    write_result(tmp_path, "go/a", "r02", agent="oracle")
    write_result(tmp_path, "go/b", "r03", agent="nop", outcome="failed", score=0.0)
    write_result(tmp_path, "py/c", "r04", agent="oracle")
    assert [r.scenario for r in collect(tmp_path, use_index=use_index)] == ["go/b", "go/a", "py/c"]
    picked = collect(tmp_path, Filters(scenarios=["go/*"], agents=["oracle"]), use_index=use_index)
    assert [r.run_id for r in picked] == ["r02"]
    late = collect(tmp_path, Filters(after="2030-01-01T00:00:03"), use_index=use_index)
    assert [r.run_id for r in late] == ["r03", "r04"]


def test_an_error_takes_the_era_of_its_scenario_and_never_displaces_a_graded_run(
    tmp_path: Path,
) -> None:
    write_result(tmp_path, "go/a", "r01", agent="oracle", era="tests@2.0.0")
    write_result(tmp_path, "go/a", "r02", agent="oracle", era="tests@2.0.0")
    write_result(tmp_path, "go/a", "r03", agent="oracle", outcome="error")
    write_result(tmp_path, "go/z", "r04", agent="oracle", outcome="error")
    runs = collect(tmp_path, Filters(limit=1), use_index=False)
    by_id = {r.run_id: r.era for r in runs}
    assert by_id == {"r02": "tests@2.0.0", "r03": "tests@2.0.0", "r04": NO_ERA}


def test_agent_versions_kept_apart_merged_or_newest_only(tmp_path: Path) -> None:
    _set_version(write_result(tmp_path, "go/a", "r01", agent="codex"), "v1.10.0")
    _set_version(write_result(tmp_path, "go/a", "r02", agent="codex"), "1.9.0")
    _set_version(write_result(tmp_path, "go/a", "r03", agent="codex"), "1.10.0-rc1")

    def versions(how: str) -> list[str]:
        return sorted(r.agent_version for r in collect(tmp_path, Filters(versions=how)))

    assert versions("each") == ["1.10.0-rc1", "1.9.0", "v1.10.0"]
    assert versions("newest") == ["v1.10.0"]  # numeric, and a release above its rc
    assert versions("merge") == ["1.9.0,1.10.0-rc1,v1.10.0"] * 3


def test_tasks_after_keeps_later_tasks_and_names_the_undated(tmp_path: Path) -> None:
    runs = [
        r
        for i, s in enumerate(["go/old", "go/new", "go/undated"])
        if (r := read_run(write_result(tmp_path, s, f"r0{i}", agent="oracle"))) is not None
    ]
    dates: dict[str, str | None] = {"go/old": "2024-01-01", "go/new": "2025-06-01"}
    kept, undated = tasks_after(runs, dates, "2024-12-31")
    assert [r.scenario for r in kept] == ["go/new"] and undated == ["go/undated"]
