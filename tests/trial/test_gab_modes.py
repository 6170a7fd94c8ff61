"""goagentbench's partial modes: ``run-agent --only-start`` (an agent driven by hand, graded by
``verify``) and ``verify --only-report`` (graded, nothing written)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import CLI
from tests.support.calc import solvable_calc

pytestmark = pytest.mark.integration


@pytest.fixture
def calc(project: Path, tmp_path: Path) -> Path:
    return solvable_calc(project, tmp_path / "src")


def test_only_start_then_verify_grades_a_hand_driven_agent(
    project: Path, calc: Path, cli: CLI
) -> None:
    assert cli("setup", "t/calc").returncode == 0
    started = cli("run-agent", "t/calc", "--agent", "nop", "--only-start", "--sandbox", "local")
    assert started.returncode == 0, started.stdout + started.stderr
    ws = project / "workspace" / "t" / "calc"
    assert json.loads((ws / ".run-start.json").read_text())["agent"] == "nop"
    (ws / "calc.py").write_text("def add(a, b):\n    return a + b\n")  # the hand-driven agent
    done = cli("verify", "t/calc", "--sandbox", "local")
    assert done.returncode == 0, done.stdout + done.stderr
    (run,) = [p for p in (project / "results" / "t" / "calc").iterdir() if p.is_dir()]
    meta = json.loads((run / "run.json").read_text())
    assert meta["agent"] == "nop" and run.name.split("-")[2] == "nop"
    phases = json.loads((run / "progress.json").read_text())["phases"]
    assert [p["name"] for p in phases] == ["verify"]  # no agent phase: none ran


def test_only_report_prints_and_writes_nothing(project: Path, calc: Path, cli: CLI) -> None:
    assert cli("setup", "t/calc").returncode == 0
    ws = project / "workspace" / "t" / "calc"
    (ws / "calc.py").write_text("def add(a, b):\n    return a * b\n")
    done = cli("verify", "t/calc", "--only-report", "--sandbox", "local")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "outcome   FAILED" in done.stdout and "test_calc.py" in done.stdout
    results = project / "results"
    assert not results.exists() or not any(p.is_file() for p in results.rglob("*"))
    # the workspace is still fresh: a real run may follow
    (ws / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    assert cli("verify", "t/calc", "--sandbox", "local").returncode == 0
