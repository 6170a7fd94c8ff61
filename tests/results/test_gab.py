"""goagentbench's files from harness's records: RunStart, TokenUsage, RunProgress and the
VerificationReport, and the workspace files written without following a link."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.results import gab

pytestmark = pytest.mark.unit

META = {
    "run_id": "r1",
    "scenario": "go/x",
    "agent": "codex",
    "agent_version": "1.0",
    "model": "m",
    "started_at": "2030-01-01T00:00:00Z",
    "toolchain": {"go": "go1.24.11 (pinned)"},
}


def test_run_start_names_the_pinned_go_and_the_workspace_as_the_agent_sees_it() -> None:
    start = gab.run_start(META, "/workspace")
    assert start["workspace"] == "/workspace" and start["run_id"] == "r1"
    assert start["system"]["go_version"] == "go1.24.11"
    assert gab.run_start(META, "/w", go_version="go1.22.0")["system"]["go_version"] == "go1.22.0"


def test_token_usage_splits_cached_input_out() -> None:
    usage = {"prompt_tokens": 1000, "cached_tokens": 400, "completion_tokens": 50, "cost_usd": 0.02}
    assert gab.token_usage(usage) == {
        "input": 600,
        "cached_input": 400,
        "write_cached_input": 0,
        "output": 50,
        "total": 1050,
        "cost": 0.02,
    }
    assert gab.token_usage({"prompt_tokens": 1, "cached_tokens": 5})["input"] == 0


def test_progress_counts_the_agent_s_turns_and_time() -> None:
    phases = [
        {"name": "agent", "duration_s": 10.5, "ended_at": "t1"},
        {"name": "verify", "duration_s": 99},
        {"name": "agent", "duration_s": 4.25, "ended_at": "t2"},
    ]
    progress = gab.run_progress(META, phases, {}, "now")
    assert (progress["turns"], progress["duration_seconds"], progress["ended_at"]) == (
        2,
        14.75,
        "t2",
    )
    assert progress["updated_at"] == "now" and progress["token_usage"]["total"] == 0


def test_the_verification_report_keeps_the_verdict_and_plain_test_rows(tmp_path: Path) -> None:
    report = {
        "run_id": "r1",
        "success": True,
        "tests": [{"name": "t", "passed": True, "output": "", "error": None, "detail": {"x": 1}}],
        "partial_tests": [{"name": "p", "passed": False}],
        "partial_score": 0.5,
        "model": None,
    }
    out = gab.verification_report(report)
    assert out["success"] is True and out["tests"] == [
        {"name": "t", "passed": True, "output": "", "error": None}
    ]
    assert out["partial_score"] == 0.5 and "model" not in out
    assert "partial_tests" not in gab.verification_report({"success": False})
    run = tmp_path / "go" / "x" / "r1"
    run.mkdir(parents=True)
    path = gab.write_verification_report(run, report)
    assert path == run / "r1.verify.json" and json.loads(path.read_text())["run_id"] == "r1"


def test_progress_replaces_a_link_or_folder_the_agent_left(tmp_path: Path) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "outside.json"
    ws.mkdir()
    outside.write_text("keep")
    (ws / ".run-progress.json").symlink_to(outside)
    gab.write_run_progress(ws, {"run_id": "r1"})
    assert outside.read_text() == "keep" and not (ws / ".run-progress.json").is_symlink()
    assert json.loads((ws / ".run-progress.json").read_text()) == {"run_id": "r1"}
    (ws / ".run-progress.json").unlink()
    (ws / ".run-progress.json" / "sub").mkdir(parents=True)  # a folder in its place
    gab.write_run_progress(ws, {"run_id": "r2"})
    assert json.loads((ws / ".run-progress.json").read_text()) == {"run_id": "r2"}
