"""Repository sources: mirror cache, local path, bundle; a goagentbench file runs unchanged."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, make_repo

pytestmark = pytest.mark.integration
FIXTURE = REPO_ROOT / "tests" / "fixtures" / "goagentbench"


def run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", *args],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.fixture
def gab(project: Path, tmp_path: Path) -> dict[str, str]:
    """The goagentbench fixture in a scenario root, its repo in a mirror cache."""
    shutil.copytree(FIXTURE / "sorting", project / "scenarios" / "gab" / "sorting")
    cache = tmp_path / "cache"
    subprocess.run(
        [
            "git",
            "clone",
            "-q",
            "--bare",
            str(FIXTURE / "sorting.bundle"),
            str(cache / "github.com/example/sorting.git"),
        ],
        check=True,
    )
    return {
        "HARNESS_SCENARIO_ROOT": str(project / "scenarios"),
        "HARNESS_REPO_CACHE": str(cache),
        "HARNESS_SKIP_REMOTE": "1",
    }


def test_goagentbench_scenario_validates_and_runs(project: Path, gab: dict[str, str]) -> None:
    assert run(["validate", "gab/sorting"], project, gab).returncode == 0
    ok = run(["exec", "--agent", "oracle", "--sandbox", "local", "gab/sorting"], project, gab)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    bad = run(["exec", "--agent", "nop", "--sandbox", "local", "gab/sorting"], project, gab)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    reports = [json.loads(p.read_text()) for p in (project / "results").rglob("report.json")]
    assert sorted(r["outcome"] for r in reports) == ["failed", "success"]
    ok_report = next(r for r in reports if r["success"])
    assert ok_report["partial_score"] == 1.0
    assert {r["rule"] for r in ok_report["rules"]} == {"must-modify", "no-modify", "only-modify"}


def test_remote_without_cache_is_refused_when_skip_remote(
    project: Path, gab: dict[str, str]
) -> None:
    env = {**gab, "HARNESS_REPO_CACHE": str(project / "empty-cache")}
    res = run(["setup", "gab/sorting"], project, env)
    assert res.returncode == 2 and "mirror cache" in res.stderr and "repo" in res.stderr
    checked = run(["validate", "gab/sorting"], project, env)
    assert checked.returncode == 0 and "skipped" in checked.stdout


def test_local_path_repo(project: Path, tmp_path: Path) -> None:
    repo, sha = make_repo(
        tmp_path / "upstream",
        {"m.py": "X = 1\n", "test_m.py": "from m import X\n\ndef test_x():\n    assert X == 2\n"},
    )
    folder = project / "scenarios" / "t" / "local"
    folder.mkdir(parents=True)
    (folder / "scenario.yml").write_text(
        f"name: local\nrepo: {repo}\ncommit: {sha}\nclassification: {{type: fix-bug}}\n"
        "agent: {instructions: make X 2}\nverify: {tests: test_m.py}\n"
    )
    env = {"HARNESS_SCENARIO_ROOT": str(project / "scenarios")}
    assert run(["setup", "t/local"], project, env).returncode == 0
    ws = project / "workspace" / "t" / "local"
    (ws / "m.py").write_text("X = 2\n")
    res = run(["run-agent", "--agent", "nop", "--sandbox", "local", "t/local"], project, env)
    assert res.returncode == 0, res.stderr
    done = run(["verify", "--sandbox", "local", "t/local"], project, env)
    assert done.returncode == 0, done.stdout + done.stderr
    diff = next((project / "results").rglob("workspace.diff")).read_text()
    assert "+X = 2" in diff and "state.json" not in diff
