"""Docs true to the code: one description of seeds, the same controls in --help and the
README, "(host)" not "(image)" for --sandbox local, and a must-modify miss that does not
claim protected files changed."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from harness.verify.report import render_text
from tests.conftest import REPO_ROOT

README = (REPO_ROOT / "README.md").read_text()
DOCS = README + "".join(p.read_text() for p in sorted((REPO_ROOT / "docs").glob("*.md")))


def _help(*args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "COLUMNS": "200"}
    out = subprocess.run(
        [sys.executable, "-m", "harness.cli", *args, "--help"],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO_ROOT,
        timeout=120,
        check=True,
    ).stdout
    return " ".join(out.replace("│", " ").split())


@pytest.mark.unit
def test_seeds_are_described_one_way() -> None:
    for command in ("exec", "setup", "run"):
        text = _help(command)
        assert "overrides the scenario" not in text and "default: scenario" not in text
        assert "fresh" in text, command
    assert "--seed overrides" not in DOCS
    assert re.search(r"every trial still draws a fresh secret seed", README)


@pytest.mark.unit
def test_controls_are_listed_the_same_in_help_and_readme() -> None:
    def listed(text: str) -> list[str]:
        m = re.search(r"[Pp]rove the grader: ([A-Z][A-Z, ]+[A-Z])", text)
        assert m, text[:300]
        return [w.strip() for w in m.group(1).split(",")]

    line = next(ln for ln in README.splitlines() if ln.startswith("| `harness controls"))
    assert listed(line) == listed(_help("controls"))
    assert listed(line) == ["HIGH", "LOW", "ISOLATION", "CRITICAL", "DETERMINISM"]


CMD = ("exec", "t/calc", "--agent", "nop", "--sandbox", "local")


def _report(sandbox: str) -> dict[str, object]:
    return {
        "scenario": "s",
        "agent": "nop",
        "model": "none",
        "outcome": "failed",
        "success": False,
        "rules": [],
        "targets": [],
        "tests": [],
        "toolchain": {"ran": "Python 3.11.7"},
        "sandboxes": {"agent": sandbox, "verify": sandbox},
    }


@pytest.mark.unit
def test_local_runs_say_host_not_image() -> None:
    assert "(host)" in render_text(_report("local"))
    assert "(image)" in render_text(_report("docker"))


@pytest.mark.integration
def test_a_nop_must_modify_miss_does_not_claim_protected_files_changed(tmp_path: Path) -> None:
    from tests.conftest import make_bundle

    root = tmp_path / "project"
    folder = root / "scenarios" / "t" / "calc"
    folder.mkdir(parents=True)
    for name in ("agents.yml", "llms.yml"):
        (root / name).write_text((REPO_ROOT / name).read_text())
    sha = make_bundle(tmp_path / "src", folder / "repo.bundle", {"calc.py": "X = 1\n"})
    (folder / "t_test.py").write_text("def test_x():\n    assert False\n")
    (folder / "scenario.yml").write_text(
        f"name: calc\nrepo: repo.bundle\ncommit: {sha}\nclassification: {{type: fix-bug}}\n"
        "agent: {instructions: x}\nverify:\n  must-modify: calc.py\n"
        "  copy: [{from: t_test.py, to: .}]\n  tests: [t_test.py]\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", *CMD],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "must-modify calc.py: nothing modified there" in done.stdout
    assert "protected files changed" not in done.stdout
    assert "(host)" in done.stdout or "toolchain" not in done.stdout
