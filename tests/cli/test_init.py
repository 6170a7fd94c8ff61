"""The ``harness`` command's entry point: every command registered, the version, and how
it ends on SIGTERM and Ctrl-C (cli/__init__.py)."""

from __future__ import annotations

import signal
import subprocess
import sys
from typing import Any

import pytest

import harness.cli as cli
from harness import __version__

COMMANDS = [
    "validate", "validate-scenario", "setup", "run-agent", "verify", "exec", "scenarios",
    "controls", "coverage", "calibrate", "schema", "images", "sandbox", "doctor", "fleet",
    "gateway", "run", "exec-all", "report", "compare", "board", "view", "solution",
    "defect", "new", "bump", "lock", "check", "mine", "mutants",
]  # fmt: skip


def harness(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness", *args], capture_output=True, text=True, timeout=300
    )


@pytest.mark.integration
def test_help_lists_every_command() -> None:
    done = harness("--help")
    assert done.returncode == 0, done.stderr
    listed = {line.split()[1] for line in done.stdout.splitlines() if line.startswith("│ ")}
    assert set(COMMANDS) <= listed, set(COMMANDS) - listed


@pytest.mark.integration
def test_version_and_no_arguments() -> None:
    done = harness("--version")
    assert (done.returncode, done.stdout) == (0, f"harness {__version__}\n")
    bare = harness()
    assert bare.returncode in (0, 2) and "Usage" in bare.stdout + bare.stderr


@pytest.mark.unit
def test_sigterm_unwinds_as_exit_143() -> None:
    with pytest.raises(SystemExit) as ended:
        cli._terminate(signal.SIGTERM, None)
    assert ended.value.code == 143


@pytest.mark.unit
def test_main_sets_sigterm_and_ends_ctrl_c_with_130(monkeypatch: pytest.MonkeyPatch) -> None:
    handlers: dict[int, Any] = {}
    monkeypatch.setattr(cli.signal, "signal", lambda sig, fn: handlers.__setitem__(sig, fn))
    monkeypatch.setattr(cli, "_register_subapps", lambda: None)
    monkeypatch.setattr(sys, "argv", ["harness", "exec"])

    def interrupted() -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "app", interrupted)
    with pytest.raises(SystemExit) as ended:
        cli.main()
    assert ended.value.code == 130
    assert handlers == {signal.SIGTERM: cli._terminate}
