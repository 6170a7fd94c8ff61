"""A tiny fix-bug scenario shared by the trial, gateway and containment tests: ``calc.py``'s
``add`` subtracts, a hidden pytest expects 2 + 3 == 5; and harness run as a subprocess in
the project folder, finding the test agents (``tests.support...``) on its PYTHONPATH."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from harness.config.settings import Settings
from tests.conftest import make_bundle, run_harness

FILES = {"calc.py": "def add(a, b):\n    return a - b\n"}
HIDDEN = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def write_calc(
    project: Path,
    src: Path,
    *,
    name: str = "calc",
    instructions: str = "please fix add in calc.py",
    environment: str | None = "{image: python, agent-timeout: 600s}",
    rules: str = "  must-modify: calc.py\n",
    extra: str = "",
    files: dict[str, str] | None = None,
) -> Path:
    """``scenarios/t/<name>`` from ``FILES`` (or ``files``) bundled under ``src``; returns
    its folder. ``environment`` None leaves the field out; ``extra`` is appended."""
    folder = project / "scenarios" / "t" / name
    folder.mkdir(parents=True)
    sha = make_bundle(src, folder / "repo.bundle", files or FILES)
    (folder / "hidden").mkdir()
    (folder / "hidden" / "test_hidden_calc.py").write_text(HIDDEN)
    env = f"environment: {environment}\n" if environment else ""
    (folder / "scenario.yml").write_text(
        f"name: {name}\nrepo: repo.bundle\ncommit: {sha}\nclassification: {{type: fix-bug}}\n"
        f"agent: {{instructions: {json.dumps(instructions)}}}\n{env}verify:\n{rules}"
        "  copy: [{from: hidden/test_hidden_calc.py, to: .}]\n  tests: [test_hidden_calc.py]\n"
        + extra
    )
    return folder


def add_entrants(project: Path, agents: str = "", llms: str = "") -> Path:
    """Append agent and LLM entries (YAML list items) to the project's registry files."""
    for file, text in (("agents.yml", agents), ("llms.yml", llms)):
        if text:
            with (project / file).open("a") as fh:
                fh.write(text)
    return project


def harness(project: Path, *args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """``harness ARGS`` in ``project`` with its scenario root."""
    return run_harness(project, *args, timeout=timeout)


def solvable_calc(project: Path, src: Path) -> Path:
    """``scenarios/t/calc`` with a reference solution, its test copied in by ``verify``."""
    folder = project / "scenarios" / "t" / "calc"
    folder.mkdir(parents=True)
    sha = make_bundle(src, folder / "repo.bundle", FILES)
    (folder / "test_calc.py").write_text(HIDDEN)
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


def project_settings(project: Path) -> Settings:
    """Settings for a test project at ``project``: its folders under it, nothing remote."""
    return Settings(
        project_root=project,
        workspace=project / "workspace",
        results=project / "results",
        scenario_root=project / "scenarios",
        cache_dir=project / "cache",
        skip_remote=True,
    )
