"""Shipped scenarios end to end: on the host (``--sandbox local``) and in Docker."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.integration


def harness(args: list[str], tmp: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "HARNESS_WORKSPACE": str(tmp / "ws"),
        "HARNESS_RESULTS": str(tmp / "res"),
        "HARNESS_SCENARIO_ROOT": str(REPO_ROOT / "scenarios"),
        "HARNESS_SKIP_REMOTE": "1",  # tests never reach github.com (real-repo scenarios)
    }
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", *args],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def only_run(tmp: Path, scenario: str) -> Path:
    runs = sorted((tmp / "res" / scenario).iterdir())
    assert len(runs) == 1
    return runs[0]


@pytest.mark.parametrize("scenario", ["py/ledger-rounding", "go/wordfreq"])
def test_oracle_succeeds_and_nop_fails(scenario: str, tmp_path: Path) -> None:
    ok = harness(["exec", "--agent", "oracle", "--sandbox", "local", scenario], tmp_path / "a")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    run = only_run(tmp_path / "a", scenario)
    for rel in (
        "run.json",
        "progress.json",
        "workspace.diff",
        "agent/transcript.txt",
        "verify/report.json",
        "verify/report.txt",
    ):
        assert (run / rel).is_file(), rel
    report = json.loads((run / "verify/report.json").read_text())
    meta = json.loads((run / "run.json").read_text())
    assert report["success"] is True and report["outcome"] == "success"
    assert report["score"] == 1.0 and report["era"].startswith("tests@")
    assert report["tests"] and all(t["passed"] for t in report["tests"])
    assert {
        "run_id",
        "scenario",
        "agent",
        "agent_version",
        "model",
        "partial_score",
        "schema_version",
    } <= report.keys()
    assert meta["scenario_sha"] and len(meta["seed"]) == 16 and meta["harness_version"]
    phases = json.loads((run / "progress.json").read_text())["phases"]
    assert [p["name"] for p in phases] == ["agent", "verify"]
    assert all(p["duration_s"] is not None for p in phases)
    diff = (run / "workspace.diff").read_text()
    assert diff.startswith("diff --git") and "harness" not in diff.split("\n")[0]
    # hidden tests were copied only into the verifier's copy, never the workspace
    hidden = set(report["hidden_files"])
    ws = tmp_path / "a" / "ws" / scenario
    assert hidden and not any((ws / h).exists() for h in hidden)

    bad = harness(["exec", "--agent", "nop", "--sandbox", "local", scenario], tmp_path / "b")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    report = json.loads((only_run(tmp_path / "b", scenario) / "verify/report.json").read_text())
    assert report["success"] is False and report["outcome"] == "failed"
    assert report["score"] < 0.5
    assert "FAIL" in (only_run(tmp_path / "b", scenario) / "verify/report.txt").read_text()


def test_step_by_step_commands(tmp_path: Path) -> None:
    scenario = "py/ledger-rounding"
    assert harness(["setup", scenario], tmp_path).returncode == 0
    assert (
        harness(
            ["run-agent", "--agent", "oracle", "--sandbox", "local", scenario], tmp_path
        ).returncode
        == 0
    )
    again = harness(["run-agent", "--agent", "oracle", "--sandbox", "local", scenario], tmp_path)
    assert again.returncode == 2 and "already has a run" in again.stderr
    done = harness(["verify", "--sandbox", "local", scenario], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout


def test_copy_only_marks_workspace(tmp_path: Path) -> None:
    scenario = "py/ledger-rounding"
    assert harness(["setup", scenario], tmp_path).returncode == 0
    copied = harness(["verify", "--copy-only", "--sandbox", "local", scenario], tmp_path)
    assert copied.returncode == 0, copied.stderr
    assert (tmp_path / "ws" / scenario / "test_hidden_ledger").is_dir()
    refused = harness(["run-agent", "--agent", "nop", "--sandbox", "local", scenario], tmp_path)
    assert refused.returncode == 2 and "harness setup" in refused.stderr


def test_copy_only_never_writes_through_a_workspace_link(tmp_path: Path) -> None:
    scenario = "smoke/py-fast"
    assert harness(["setup", scenario], tmp_path).returncode == 0
    outside = tmp_path / "outside"
    outside.mkdir()
    hidden = tmp_path / "ws" / scenario / "test_hidden_calc"
    hidden.mkdir()
    (hidden / "__init__.py").symlink_to(outside / "planted.py")
    refused = harness(["verify", "--copy-only", "--sandbox", "local", scenario], tmp_path)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "test_hidden_calc/__init__.py' in the workspace is a symbolic link" in refused.stderr
    assert list(outside.iterdir()) == []  # nothing written through the link


def test_scenarios_list_and_schema(tmp_path: Path) -> None:
    listed = harness(["scenarios"], tmp_path)
    assert listed.returncode == 0 and "py/ledger-rounding" in listed.stdout
    assert "fix-bug" in listed.stdout
    schema = json.loads(harness(["schema", "scenario"], tmp_path).stdout)
    assert "verify" in schema["properties"]
    assert harness(["validate"], tmp_path).returncode == 0


@pytest.mark.docker
@pytest.mark.parametrize("scenario", ["py/ledger-rounding", "go/wordfreq"])
def test_shipped_scenarios_in_docker(scenario: str, tmp_path: Path) -> None:
    """The default sandbox: the agent and the verifier each in their own container."""
    ok = harness(["exec", "--agent", "oracle", scenario], tmp_path / "a")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    meta = json.loads((only_run(tmp_path / "a", scenario) / "run.json").read_text())
    assert meta["sandbox"] == "docker" and meta["images"]["verify"].startswith("sha256:")
    bad = harness(["exec", "--agent", "nop", scenario], tmp_path / "b")
    assert bad.returncode == 1, bad.stdout + bad.stderr
