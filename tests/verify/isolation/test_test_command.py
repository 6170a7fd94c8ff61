"""One test command: a missing program is exit 127, the output kept to its tail, and the
test user's own home and temp folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.verify.isolation.test_command import OUTPUT_CAP, home_env, run_command, tail

pytestmark = pytest.mark.unit


def test_a_missing_program_is_exit_127_and_runs_nothing(tmp_path: Path) -> None:
    code, output = run_command(["no-such-runner-xyz"], tmp_path, {"PATH": str(tmp_path)}, 5)
    assert code == 127 and output == "no-such-runner-xyz: command not found"


def test_a_command_runs_in_its_folder_with_its_environment(tmp_path: Path) -> None:
    env = {**os.environ, "HARNESS_PROBE": "seen"}
    code, output = run_command(["sh", "-c", 'pwd; echo "$HARNESS_PROBE"'], tmp_path, env, 30)
    assert code == 0 and output.split() == [str(tmp_path), "seen"]


def test_output_is_kept_to_its_tail() -> None:
    assert tail("short") == "short"
    long = "a" * OUTPUT_CAP + "end"
    assert tail(long) == "..." + long[-OUTPUT_CAP:] and tail(long).endswith("end")


def test_the_test_user_gets_its_own_home_and_temp_folder(tmp_path: Path) -> None:
    env = home_env(tmp_path)
    assert env["HOME"] == str(tmp_path) and env["USER"] == env["LOGNAME"] == "harness-tests"
    assert env["TMPDIR"] == env["GOTMPDIR"] == str(tmp_path / "tmp")
