"""``harness validate --deep``: the hidden tests built on the baseline and with the reference
solution, in a throwaway workspace; a solution that does not build is the input's fault."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from harness.errors import EXIT_BAD_INPUT, EXIT_SUCCESS
from harness.grader.deep import validate_deep
from harness.scenario.load import load_scenario
from tests.support.calc import project_settings, solvable_calc

pytestmark = pytest.mark.unit


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Temporary folders made here (never left in /tmp, whatever the code does)."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def test_baseline_and_solution_build_and_nothing_is_left(
    project: Path, tmp_path: Path, scratch: Path
) -> None:
    solvable_calc(project, tmp_path / "src")
    settings = project_settings(project)
    report = validate_deep(load_scenario("t/calc", settings.scenario_root), settings, "local")
    assert report.exit_code == EXIT_SUCCESS, report.lines
    assert report.lines == [
        "  baseline  builds      test_calc.py",
        "  solution  builds      test_calc.py",
    ]
    assert not (project / "workspace").exists() and not (project / "results").exists()
    assert not list(scratch.glob("harness-deep-*"))  # the throwaway workspace is gone


def test_a_solution_that_does_not_build_is_bad_input(
    project: Path, tmp_path: Path, scratch: Path
) -> None:
    folder = solvable_calc(project, tmp_path / "src")
    (folder / "solution.patch").write_text(
        "--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n-def add(a, b):\n+def add(a, b)\n"
        "     return a - b\n"
    )
    settings = project_settings(project)
    report = validate_deep(load_scenario("t/calc", settings.scenario_root), settings, "local")
    assert report.exit_code == EXIT_BAD_INPUT
    assert report.lines[0] == "  baseline  builds      test_calc.py"
    assert report.lines[1].startswith("  solution  NO BUILD    test_calc.py: ")
    assert "(fix: the reference solution must build with the hidden tests)" in report.lines[1]
