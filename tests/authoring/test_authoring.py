"""Authoring without snags: setup before a solution exists, solution/defect save (with the
broken checks found by scoring), new, lock + bump, one-version rows, check."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
import typer
from typer.testing import CliRunner

from tests.conftest import REPO_ROOT, git

PY_FAST = REPO_ROOT / "scenarios" / "smoke" / "py-fast"
FIXED = "    return max(low, min(value, high))\n"


def _app() -> typer.Typer:
    from harness.cli import _register_subapps, app

    if not any(g.name == "solution" for g in app.registered_groups):
        _register_subapps()
    return app


def _cli(project: Path, *args: str, cache: Path | None = None) -> SimpleNamespace:
    """``harness ARGS`` in-process (a subprocess costs ~1 s of imports per call)."""
    env = {
        "HARNESS_SCENARIO_ROOT": str(project / "scenarios"),
        "HARNESS_WORKSPACE": str(project / "workspace"),
        "HARNESS_RESULTS": str(project / "results"),
        "HARNESS_REPO_CACHE": str(cache) if cache else None,
    }
    before = Path.cwd()
    os.chdir(project)
    try:
        out = CliRunner().invoke(_app(), list(args), env=env)
    finally:
        os.chdir(before)
    if out.exception is not None and not isinstance(out.exception, SystemExit):
        raise out.exception
    return SimpleNamespace(returncode=out.exit_code, stdout=out.stdout, stderr=out.stderr)


def _draft(project: Path) -> Path:
    """smoke/py-fast as an author has it before writing the solution and defects."""
    folder = project / "scenarios" / "t" / "clamp"
    shutil.copytree(PY_FAST, folder)
    (folder / "solution.patch").unlink()
    shutil.rmtree(folder / "defects")
    text = (folder / "scenario.yml").read_text()
    (folder / "scenario.yml").write_text(re.sub(r"(?m)^solution:.*\n", "", text))
    return folder


def _fix(ws: Path) -> None:
    path = ws / "calc" / "__init__.py"
    lines = path.read_text().splitlines(keepends=True)
    lines[-1] = FIXED
    path.write_text("".join(lines))


@pytest.mark.integration
def test_solution_and_defect_save(project: Path) -> None:
    folder = _draft(project)
    setup = _cli(project, "setup", "t/clamp")
    assert setup.returncode == 0, setup.stderr  # no solution yet: setup still works
    ws = project / "workspace" / "t" / "clamp"
    assert _cli(project, "verify", "--copy-only", "t/clamp").returncode == 0  # hidden tests in
    _fix(ws)
    saved = _cli(project, "solution", "save", "t/clamp")
    assert saved.returncode == 0, saved.stderr
    patch = (folder / "solution.patch").read_text()
    assert "calc/__init__.py" in patch and "test_hidden_calc" not in patch
    assert "solution: solution.patch" in (folder / "scenario.yml").read_text()
    # Declared but not written yet (the snag): setup still works; save fills it in.
    (folder / "solution.patch").unlink()
    assert _cli(project, "setup", "t/clamp").returncode == 0
    _fix(ws)
    assert _cli(project, "solution", "save", "t/clamp").returncode == 0
    assert (folder / "solution.patch").read_text() == patch
    assert (folder / "scenario.yml").read_text().count("solution:") == 1

    # A defect: set up afresh, apply the solution, break one side of it, save with auto.
    assert _cli(project, "setup", "t/clamp").returncode == 0
    assert _cli(project, "solution", "apply", "t/clamp").returncode == 0
    path = ws / "calc" / "__init__.py"
    path.write_text(path.read_text().replace(FIXED, "    return min(value, high)\n"))
    defect = _cli(
        project, "defect", "save", "ignores-low", "t/clamp", "--sandbox", "local",
        "--harm", "values below the range pass through unclamped",
    )  # fmt: skip
    assert defect.returncode == 0, defect.stdout + defect.stderr
    meta = (folder / "defects" / "ignores-low.yml").read_text()
    assert "tests:test_hidden_calc/test_low.py" in meta and "high" not in meta.split("harm")[0]
    assert "min(value, high)" in (folder / "defects" / "ignores-low.patch").read_text()
    # The saved scenario proves its grader with what was saved.
    controls = _cli(project, "controls", "t/clamp", "--sandbox", "local")
    assert controls.returncode == 0, controls.stdout + controls.stderr
    # No change on top of the solution: refused, nothing written.
    assert _cli(project, "setup", "t/clamp").returncode == 0
    assert _cli(project, "solution", "apply", "t/clamp").returncode == 0
    empty = _cli(project, "defect", "save", "nothing", "t/clamp", "--harm", "x")
    assert empty.returncode == 2 and "does not differ" in empty.stderr
    assert not (folder / "defects" / "nothing.patch").exists()


def _upstream(root: Path) -> tuple[Path, str, str]:
    repo = root / "upstream"
    repo.mkdir()
    git(["init", "-q"], repo)
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    git(["add", "-A"], repo)
    git(["commit", "-qm", "start"], repo)
    start = git(["rev-parse", "HEAD"], repo)
    (repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    git(["commit", "-qam", "fix"], repo)
    return repo, start, git(["rev-parse", "HEAD"], repo)


@pytest.mark.integration
def test_new_lock_bump(project: Path, tmp_path: Path) -> None:
    repo, start, _later = _upstream(tmp_path)
    made = _cli(project, "new", "py/demo", "--repo", str(repo), "--commit", start[:8])
    assert made.returncode == 0, made.stderr
    folder = project / "scenarios" / "py" / "demo"
    files = {p.name for p in folder.iterdir()}
    assert files == {"repo.bundle", "scenario.yml", "SPEC.md", "hidden"}
    assert start in (folder / "scenario.yml").read_text()  # the full sha
    copy = tmp_path / "copy"
    git(["clone", "-q", "--mirror", str(folder / "repo.bundle"), str(copy)], tmp_path)
    assert git(["rev-list", "--all"], copy) == start  # no future in the bundle either
    assert _cli(project, "setup", "py/demo").returncode == 0
    from harness.authoring.check import _todos
    from harness.scenario.load import load_scenario

    todos = _todos(load_scenario("py/demo", project / "scenarios"))
    assert not todos.ok and "scenario.yml" in todos.detail and "SPEC.md" in todos.detail
    # Pinned by URL: the commit is checked (and completed) in the repository cache.
    cache = tmp_path / "cache"
    git(["clone", "-q", "--mirror", str(repo), str(cache / "github.com/acme/calc.git")], tmp_path)
    pinned = _cli(
        project,
        "new",
        "py/pinned",
        "--repo",
        "github.com/acme/calc",
        "--commit",
        start[:8],
        cache=cache,
    )
    assert pinned.returncode == 0, pinned.stderr
    text = (project / "scenarios" / "py" / "pinned" / "scenario.yml").read_text()
    assert "repo: github.com/acme/calc" in text and f"commit: {start}" in text
    assert not (project / "scenarios" / "py" / "pinned" / "repo.bundle").exists()
    assert _cli(project, "setup", "py/pinned", cache=cache).returncode == 0
    again = _cli(project, "new", "py/demo", "--repo", str(repo), "--commit", start)
    assert again.returncode == 2 and "exists" in again.stderr

    # Drafts change freely; a locked version may not.
    assert _cli(project, "validate", "py/demo").returncode == 0
    locked = _cli(project, "lock", "py/demo")
    assert locked.returncode == 0 and "py/demo@1.0.0" in locked.stdout
    assert "py/demo@1.0.0" in (project / "scenarios" / "scenarios.lock").read_text()
    assert _cli(project, "validate", "py/demo").returncode == 0
    (folder / "SPEC.md").write_text("# demo\n\nAdd two numbers.\n")
    refused = _cli(project, "validate", "py/demo")
    assert refused.returncode == 2 and "harness bump py/demo" in refused.stderr
    bumped = _cli(project, "bump", "py/demo", "--minor")
    assert bumped.returncode == 0, bumped.stderr
    new = project / "scenarios" / "py" / "demo-1.1.0"
    assert 'version: "1.1.0"' in (new / "scenario.yml").read_text()
    assert _cli(project, "validate", "py/demo-1.1.0").returncode == 0
    assert _cli(project, "bump", "py/demo", "--minor").returncode == 2  # 1.1.0 exists
    assert _cli(project, "lock", "py/demo-1.1.0").returncode == 0
    assert "py/demo@1.1.0" in (project / "scenarios" / "scenarios.lock").read_text()


@pytest.mark.integration
def test_check_prints_a_summary_to_paste(project: Path) -> None:
    shutil.copytree(PY_FAST, project / "scenarios" / "smoke" / "py-fast")
    done = _cli(project, "check", "smoke/py-fast", "--sandbox", "local")
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "### harness check: smoke/py-fast v1.0.0" in out and "**READY**" in out
    assert re.search(r"\| validate[^|]* \| ok \|", out)
    assert "| controls | ok | GRADER TRUSTED" in out
    assert "| entrant oracle | ok | success" in out and "| entrant nop | ok | failed" in out
    assert "| lock | ok | draft" in out and "| placeholders | ok |" in out


@pytest.mark.integration
def test_clone_error_names_the_repo_cache(project: Path, tmp_path: Path) -> None:
    folder = _draft(project)
    yml = folder / "scenario.yml"
    missing = (tmp_path / "nowhere" / "acme.git").as_uri()
    yml.write_text(yml.read_text().replace("repo: repo.bundle", f"repo: {missing}"))
    done = _cli(project, "validate", "t/clamp")
    assert done.returncode == 2 and "cannot clone" in done.stderr
    assert "HARNESS_REPO_CACHE" in done.stderr


def test_a_locked_folder_keeps_its_hash_when_the_calibration_ledger_grows(
    tmp_path: Path,
) -> None:
    """The ledger is evidence of scorings (a Docker controls run adds lines after the
    lock); any other file, the thresholds among them, is content."""
    from harness.grader.calibration_ledger import LEDGER
    from harness.scenario.load import EVIDENCE_FILES, folder_hash

    assert LEDGER in EVIDENCE_FILES
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "thresholds.yml").write_text("calibrated: true\n")
    before = folder_hash(tmp_path)
    (tmp_path / "suite" / LEDGER).write_text('{"tree": "reference"}\n')
    assert folder_hash(tmp_path) == before
    (tmp_path / "suite" / "thresholds.yml").write_text("calibrated: false\n")
    assert folder_hash(tmp_path) != before
