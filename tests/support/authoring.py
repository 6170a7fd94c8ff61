"""The authoring CLI in-process, and the scenarios and repositories its tests start from."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import typer
from typer.testing import CliRunner

from tests.conftest import REPO_ROOT, git

PY_FAST = REPO_ROOT / "scenarios" / "smoke" / "py-fast"
FIXED = "    return max(low, min(value, high))\n"


def app() -> typer.Typer:
    from harness.cli import _register_subapps, app

    if not any(g.name == "solution" for g in app.registered_groups):
        _register_subapps()
    return app


def cli(project: Path, *args: str, cache: Path | None = None) -> SimpleNamespace:
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
        out = CliRunner().invoke(app(), list(args), env=env)
    finally:
        os.chdir(before)
    if out.exception is not None and not isinstance(out.exception, SystemExit):
        raise out.exception
    return SimpleNamespace(returncode=out.exit_code, stdout=out.stdout, stderr=out.stderr)


def draft(project: Path) -> Path:
    """smoke/py-fast as an author has it before writing the solution and defects."""
    folder = project / "scenarios" / "t" / "clamp"
    shutil.copytree(PY_FAST, folder)
    (folder / "solution.patch").unlink()
    shutil.rmtree(folder / "defects")
    text = (folder / "scenario.yml").read_text()
    (folder / "scenario.yml").write_text(re.sub(r"(?m)^solution:.*\n", "", text))
    return folder


def fix(ws: Path) -> None:
    """The clamp fixed in the workspace, as its author would."""
    path = ws / "calc" / "__init__.py"
    lines = path.read_text().splitlines(keepends=True)
    lines[-1] = FIXED
    path.write_text("".join(lines))


def upstream(root: Path) -> tuple[Path, str, str]:
    """A repository with a bug and, one commit later, its fix: (path, start, fixed)."""
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
