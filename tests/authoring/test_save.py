"""Saving what an author made: the solution, defects with the checks they break (found by
scoring), an empty defect refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.authoring import FIXED, cli, draft, fix


@pytest.mark.integration
def test_solution_and_defect_save(project: Path) -> None:
    folder = draft(project)
    setup = cli(project, "setup", "t/clamp")
    assert setup.returncode == 0, setup.stderr  # no solution yet: setup still works
    ws = project / "workspace" / "t" / "clamp"
    assert cli(project, "verify", "--copy-only", "t/clamp").returncode == 0  # hidden tests in
    fix(ws)
    saved = cli(project, "solution", "save", "t/clamp")
    assert saved.returncode == 0, saved.stderr
    patch = (folder / "solution.patch").read_text()
    assert "calc/__init__.py" in patch and "test_hidden_calc" not in patch
    assert "solution: solution.patch" in (folder / "scenario.yml").read_text()
    # Declared but not written yet (the snag): setup still works; save fills it in.
    (folder / "solution.patch").unlink()
    assert cli(project, "setup", "t/clamp").returncode == 0
    fix(ws)
    assert cli(project, "solution", "save", "t/clamp").returncode == 0
    assert (folder / "solution.patch").read_text() == patch
    assert (folder / "scenario.yml").read_text().count("solution:") == 1

    # A defect: set up afresh, apply the solution, break one side of it, save with auto.
    assert cli(project, "setup", "t/clamp").returncode == 0
    assert cli(project, "solution", "apply", "t/clamp").returncode == 0
    path = ws / "calc" / "__init__.py"
    path.write_text(path.read_text().replace(FIXED, "    return min(value, high)\n"))
    defect = cli(
        project, "defect", "save", "ignores-low", "t/clamp", "--sandbox", "local",
        "--harm", "values below the range pass through unclamped",
    )  # fmt: skip
    assert defect.returncode == 0, defect.stdout + defect.stderr
    meta = (folder / "defects" / "ignores-low.yml").read_text()
    assert "tests:test_hidden_calc/test_low.py" in meta and "high" not in meta.split("harm")[0]
    assert "min(value, high)" in (folder / "defects" / "ignores-low.patch").read_text()
    # The saved scenario proves its grader with what was saved.
    controls = cli(project, "controls", "t/clamp", "--sandbox", "local")
    assert controls.returncode == 0, controls.stdout + controls.stderr
    # No change on top of the solution: refused, nothing written.
    assert cli(project, "setup", "t/clamp").returncode == 0
    assert cli(project, "solution", "apply", "t/clamp").returncode == 0
    empty = cli(project, "defect", "save", "nothing", "t/clamp", "--harm", "x")
    assert empty.returncode == 2 and "does not differ" in empty.stderr
    assert not (folder / "defects" / "nothing.patch").exists()
