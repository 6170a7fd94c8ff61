"""Exit codes and promises: a network failure while cloning is exit 3 (not bad input); a
refused ``report --publish`` writes nothing; a closed stdout pipe ends quietly; a
workspace another harness process holds is refused with one line (stale locks recovered)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import CLI, REPO_ROOT, make_bundle
from tests.support.holder import hold_workspace

FILES = {"calc.py": "def add(a, b):\n    return a - b\n"}


def _scenario(project: Path, tmp_path: Path, repo: str | None = None) -> Path:
    folder = project / "scenarios" / "t" / "calc"
    folder.mkdir(parents=True)
    sha = make_bundle(tmp_path / "src", folder / "repo.bundle", FILES)
    (folder / "hidden").mkdir()
    (folder / "hidden" / "test_calc.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    )
    (folder / "scenario.yml").write_text(
        f"name: calc\nrepo: {repo or 'repo.bundle'}\ncommit: {sha}\n"
        "classification: {type: fix-bug}\nagent: {instructions: please fix add}\n"
        "verify:\n  must-modify: calc.py\n  copy: [{from: hidden/test_calc.py, to: .}]\n"
        "  tests: [test_calc.py]\n"
    )
    return folder


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.integration
def test_clone_over_an_unreachable_network_is_exit_3(
    project: Path, tmp_path: Path, cli: CLI
) -> None:
    _scenario(project, tmp_path, repo=f"http://127.0.0.1:{_closed_port()}/calc.git")
    done = cli("setup", "t/calc")
    assert done.returncode == 3, done.stdout + done.stderr
    assert "cannot reach" in done.stderr and len(done.stderr.strip().splitlines()) == 1


@pytest.mark.integration
def test_publish_without_markers_writes_nothing(project: Path, tmp_path: Path, cli: CLI) -> None:
    _scenario(project, tmp_path)
    assert cli("exec", "t/calc", "--agent", "nop", "--sandbox", "local").returncode == 1
    readme = project / "README.md"
    readme.write_text("# no markers here\n")
    done = cli("report", "--publish")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "markers" in done.stderr
    assert not (project / "result_summaries").exists()
    assert readme.read_text() == "# no markers here\n"


@pytest.mark.integration
def test_a_closed_pipe_ends_quietly(project: Path, tmp_path: Path) -> None:
    _scenario(project, tmp_path)
    env = {**os.environ, "HARNESS_SCENARIO_ROOT": str(project / "scenarios")}
    env["PYTHONPATH"] = str(REPO_ROOT)
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "scenarios"],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before the first line is written
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert err == "" and proc.returncode != 3


@pytest.mark.integration
def test_a_second_exec_of_a_busy_workspace_is_refused(
    project: Path, tmp_path: Path, cli: CLI
) -> None:
    _scenario(project, tmp_path)
    proc = hold_workspace(project / "workspace" / "t" / "calc")
    try:
        began = time.monotonic()
        done = cli("exec", "t/calc", "--agent", "nop", "--sandbox", "local")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"in use by another harness process (pid {proc.pid})" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and time.monotonic() - began < 60
    assert cli("exec", "t/calc", "--agent", "nop", "--sandbox", "local").returncode == 1


@pytest.mark.integration
def test_a_calibrated_suite_that_misses_its_pin_is_refused_before_any_run(
    project: Path, cli: CLI
) -> None:
    """The scorer would refuse at verification, after the agent's whole run: exec says so
    first, in one line naming the pin file, and writes no run."""
    folder = project / "scenarios" / "apps" / "meridian-console"
    shutil.copytree(REPO_ROOT / "scenarios" / "apps" / "meridian-console", folder)
    (folder / "suite" / "thresholds.pin").write_text("0" * 64 + "\n")
    done = cli("exec", "apps/meridian-console", "--agent", "nop", "--sandbox", "local")
    assert done.returncode == 2, done.stdout + done.stderr
    line = done.stderr.strip()
    assert len(line.splitlines()) == 1 and "thresholds.pin" in line and "does not match" in line
    assert sorted(p.name for p in project.iterdir()) == ["agents.yml", "llms.yml", "scenarios"]
