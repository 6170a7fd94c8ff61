"""``verify.tests-from``: hidden tests read from the repository's own fix commit when a
tree is verified, never copied into the scenario, never reachable from the workspace."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import CLI, git, write_scenario

pytestmark = pytest.mark.integration

BUG = "def add(a, b):\n    return a - b\n"
FIX = "def add(a, b):\n    return a + b\n"
OLD_TEST = "from calc import add\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n"
NEW_TEST = OLD_TEST + "\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def upstream(root: Path) -> tuple[Path, str, str, str]:
    """A repository whose second commit fixes add() and adds its test."""
    repo = root / "upstream"
    repo.mkdir(parents=True)
    git(["init", "-q"], repo)
    (repo / "calc.py").write_text(BUG)
    (repo / "test_calc.py").write_text(OLD_TEST)
    git(["add", "-A"], repo)
    git(["commit", "-qm", "start"], repo)
    start = git(["rev-parse", "HEAD"], repo)
    (repo / "calc.py").write_text(FIX)
    (repo / "test_calc.py").write_text(NEW_TEST)
    git(["commit", "-qam", "fix add"], repo)
    fix = git(["rev-parse", "HEAD"], repo)
    solution = git(["diff", start, fix, "--", "calc.py"], repo) + "\n"
    return repo, start, fix, solution


def scenario(project: Path, repo: Path, start: str, fix: str, solution: str) -> None:
    write_scenario(
        project,
        "py/fromfix",
        f"""name: fromfix
version: "1.0.0"
repo: {repo}
commit: {start}
task-date: 2024-01-10
solution: solution.patch
classification: {{type: fix-bug}}
agent: {{instructions: "make add() add"}}
verify:
  runner: pytest
  tests-from: {{commit: {fix}, paths: [test_calc.py]}}
  tests: [test_calc.py]
""",
        {"solution.patch": solution},
    )


def report(results: Path) -> dict:
    runs = sorted((results / "py" / "fromfix").iterdir())
    return json.loads((runs[-1] / "verify" / "report.json").read_text())


def test_hidden_tests_come_from_the_fix_commit(project: Path, cli: CLI, tmp_path: Path) -> None:
    repo, start, fix, solution = upstream(tmp_path)
    scenario(project, repo, start, fix, solution)
    env = {"HARNESS_CACHE_DIR": str(tmp_path / "cache")}
    assert not (project / "scenarios" / "py" / "fromfix" / "test_calc.py").exists()

    done = cli("setup", "py/fromfix", env=env)
    assert done.returncode == 0, done.stderr
    ws = project / "workspace" / "py" / "fromfix"
    assert (ws / "test_calc.py").read_text() == OLD_TEST  # the agent sees the old test only
    seen = subprocess.run(["git", "cat-file", "-e", fix], cwd=ws, capture_output=True)
    assert seen.returncode != 0, "the fix commit must not be reachable from the workspace"

    nop = cli("exec", "--agent", "nop", "--sandbox", "local", "py/fromfix", env=env)
    assert nop.returncode == 1, nop.stdout + nop.stderr
    failed = report(project / "results")
    assert failed["outcome"] == "failed"
    oracle = cli("exec", "--agent", "oracle", "--sandbox", "local", "py/fromfix", env=env)
    assert oracle.returncode == 0, oracle.stdout + oracle.stderr
    passed = report(project / "results")
    assert passed["outcome"] == "success" and passed["score"] == 1.0


def test_a_path_missing_at_the_fix_commit_is_a_user_error(
    project: Path, cli: CLI, tmp_path: Path
) -> None:
    repo, start, fix, solution = upstream(tmp_path)
    scenario(project, repo, start, fix, solution)
    yml = project / "scenarios" / "py" / "fromfix" / "scenario.yml"
    yml.write_text(yml.read_text().replace("paths: [test_calc.py]", "paths: [test_gone.py]"))
    done = cli("validate", "py/fromfix", env={"HARNESS_CACHE_DIR": str(tmp_path / "cache")})
    assert done.returncode == 2, done.stdout + done.stderr
    assert "verify.tests-from.paths" in done.stderr and "test_gone.py" in done.stderr
