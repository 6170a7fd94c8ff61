"""goagentbench's command set on harness: ``validate-scenario``, ``run-agent --only-start``
(an agent driven by hand, graded by ``verify``), ``verify --only-report`` (no results
written), and ``<run>.verify.json`` in goagentbench's VerificationReport shape, found by
goagentbench's reader (a walk of ``results/`` for ``*.verify.json``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import CLI, make_bundle

pytestmark = pytest.mark.integration

FILES = {"calc.py": "def add(a, b):\n    return a - b\n"}


@pytest.fixture
def calc(project: Path, tmp_path: Path) -> Path:
    folder = project / "scenarios" / "t" / "calc"
    folder.mkdir(parents=True)
    sha = make_bundle(tmp_path / "src", folder / "repo.bundle", FILES)
    (folder / "test_calc.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    )
    (folder / "solution.patch").write_text(
        "--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n"
        "-    return a - b\n+    return a + b\n"
    )
    (folder / "scenario.yml").write_text(
        f"name: calc\nrepo: repo.bundle\ncommit: {sha}\nsolution: solution.patch\n"
        "classification: {type: fix-bug}\nagent: {instructions: please fix add}\n"
        "verify:\n  must-modify: calc.py\n  copy: [{from: test_calc.py, to: .}]\n"
        "  tests: [test_calc.py]\n"
    )
    return folder


def test_verify_json_beside_the_report_in_goagentbench_shape(
    project: Path, calc: Path, cli: CLI
) -> None:
    assert cli("exec", "t/calc", "--agent", "oracle", "--sandbox", "local").returncode == 0
    found = [p for p in (project / "results").rglob("*.verify.json")]  # goagentbench's walk
    assert len(found) == 1
    path = found[0]
    run = path.parent
    assert path.name == f"{run.name}.verify.json" and (run / "verify" / "report.json").is_file()
    gab = json.loads(path.read_text())
    assert gab["success"] is True and gab["scenario"] == "t/calc" and gab["run_id"] == run.name
    assert gab["agent"] == "oracle" and gab["verified_at"] and gab["started_at"]
    assert gab["tests"] == [
        {"name": "test_calc.py", "passed": True, "output": gab["tests"][0]["output"], "error": None}
    ]
    assert set(gab) <= {
        "run_id",
        "scenario",
        "agent",
        "agent_version",
        "model",
        "started_at",
        "progress",
        "verified_at",
        "success",
        "partial_score",
        "tests",
        "partial_tests",
    }


def test_validate_scenario_is_validate(project: Path, calc: Path, cli: CLI) -> None:
    done = cli("validate-scenario", "t/calc")
    assert done.returncode == 0 and "valid   t/calc" in done.stdout


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
