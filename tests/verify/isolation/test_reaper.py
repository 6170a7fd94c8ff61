"""One test command run so that nothing of it outlives it (verify/isolation/reaper.py,
run as the script the verifier runs)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.verify.isolation import reaper

pytestmark = pytest.mark.integration

SCRIPT = Path(reaper.__file__)


def reap(tmp_path: Path, *cmd: str, timeout: float = 30) -> tuple[dict[str, object], str]:
    status = tmp_path / "status.json"
    done = subprocess.run(
        [sys.executable, "-I", str(SCRIPT), "--status", str(status), "--timeout", str(timeout),
         "--", *cmd],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    assert not (tmp_path / "status.json.tmp").exists()
    return json.loads(status.read_text()), done.stdout + done.stderr


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] != "Z"


def test_a_command_that_ends_reports_its_code_and_output(tmp_path: Path) -> None:
    status, out = reap(tmp_path, "sh", "-c", "echo hi; exit 3")
    assert status == {"returncode": 3, "timed_out": False, "killed": 0}
    assert out == "hi\n"


def test_what_the_command_left_behind_is_killed_before_the_status(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    # a plain background child and a double-forked one in a session of its own
    script = f"sleep 300 & echo $! > {pids}; (setsid sleep 301 & echo $! >> {pids}) ; exit 0"
    status, _ = reap(tmp_path, "sh", "-c", script)
    left = [int(p) for p in pids.read_text().split()]
    assert status["returncode"] == 0 and status["timed_out"] is False
    assert isinstance(status["killed"], int) and status["killed"] >= 2
    assert len(left) == 2 and not any(alive(p) for p in left)


def test_a_command_past_its_timeout_is_killed(tmp_path: Path) -> None:
    start = time.monotonic()
    status, _ = reap(tmp_path, "sleep", "300", timeout=0.5)
    assert status["timed_out"] is True and status["returncode"] is None
    assert time.monotonic() - start < 60


def test_a_command_that_cannot_start_is_127(tmp_path: Path) -> None:
    status, out = reap(tmp_path, str(tmp_path / "no-such-command"))
    assert status == {"returncode": 127, "timed_out": False, "killed": 0}
    assert "no-such-command" in out


def test_descendants_reads_the_process_tree() -> None:
    child = subprocess.Popen(["sh", "-c", "sleep 300 & wait"])
    try:
        deadline = time.monotonic() + 10
        below: list[int] = []
        while time.monotonic() < deadline and len(below) < 2:
            below = reaper.descendants(os.getpid())
            time.sleep(0.05)
        assert child.pid in below and len(below) >= 2  # the shell and its sleep
        grandchild = [p for p in reaper.descendants(child.pid)]
        assert grandchild and child.pid not in grandchild
    finally:
        for pid in reaper.descendants(child.pid):
            os.kill(pid, 9)
        child.kill()
        child.wait()


def test_the_command_leads_a_session_of_its_own(tmp_path: Path) -> None:
    code = "import os; print(os.getsid(0) == os.getpid())"
    status, out = reap(tmp_path, sys.executable, "-c", code)
    assert status["returncode"] == 0 and out == "True\n"
