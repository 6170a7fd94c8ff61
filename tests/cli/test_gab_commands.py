"""goagentbench's command set on harness: ``validate-scenario``, and ``<run>.verify.json``
in goagentbench's VerificationReport shape, found by goagentbench's reader (a walk of
``results/`` for ``*.verify.json``)."""

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
