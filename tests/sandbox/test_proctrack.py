"""A local sandbox's processes, found and killed however they hide: a ``setsid`` daemon
started by a command is a member until it is killed, and nothing is left after ``close``."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from harness.sandbox.proctrack import ProcessTracker

pytestmark = pytest.mark.unit


def _wait_for(check: object, seconds: float = 10.0) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if check():  # type: ignore[operator]
            return
        time.sleep(0.05)
    raise AssertionError("timed out")


def _kill_leftovers(token: str) -> None:
    """Cleanup that does not trust the code under test: every process carrying the token."""
    needle = f"HARNESS_SANDBOX_TOKEN={token}".encode()
    for pid in (int(n) for n in os.listdir("/proc") if n.isdigit()):
        try:
            with open(f"/proc/{pid}/environ", "rb") as fh:
                if needle in fh.read().split(b"\0"):
                    os.kill(pid, signal.SIGKILL)
        except OSError:
            continue


@pytest.mark.parametrize("walls", [True, False], ids=["cgroups-if-root", "env-token"])
def test_a_daemon_that_left_the_process_group_is_found_and_killed(walls: bool) -> None:
    tracker = ProcessTracker()
    if not walls:  # as when the harness is not root: found by the environment token
        tracker.close()
    proc = subprocess.Popen(
        ["sh", "-c", "setsid sleep 300 & exec sleep 301"],
        env={**os.environ, **tracker.env()},
        preexec_fn=tracker.enter,  # the sandbox's own way in
        start_new_session=True,
    )
    try:
        _wait_for(lambda: len(tracker.members()) >= 2)
        assert proc.pid in tracker.members() and os.getpid() not in tracker.members()
        assert tracker.kill_all() >= 2
        proc.wait(timeout=10)
        _wait_for(lambda: tracker.members() == [])
    finally:
        _kill_leftovers(tracker.token)
        tracker.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert tracker.groups == {} and tracker.kill_all() == 0


def test_an_untracked_process_is_no_member() -> None:
    tracker = ProcessTracker()
    other = subprocess.Popen(["sleep", "30"])
    try:
        assert tracker.members() == [] and other.pid not in tracker.members()
        assert tracker.env() == {"HARNESS_SANDBOX_TOKEN": tracker.token}
    finally:
        other.kill()
        other.wait()
        tracker.close()
