"""A local sandbox's processes, found and killed however they hide: a ``setsid`` daemon
started by a command is a member until it is killed, and nothing is left after ``close``."""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
import time

import pytest

from harness.sandbox.proctrack import (
    CGROUP_ROOT,
    PREFIX,
    STALE_UNNAMED_S,
    ProcessTracker,
    sweep_stale,
)

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


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


PIDS = CGROUP_ROOT / "pids"


@pytest.mark.skipif(
    os.geteuid() != 0 or not (PIDS / "cgroup.procs").is_file(), reason="needs root and cgroup v1"
)
def test_a_killed_makers_empty_groups_are_swept_and_a_live_makers_kept() -> None:
    dead, live, holder = _dead_pid(), os.getpid(), subprocess.Popen(["sleep", "60"])
    names = {
        "killed": f"{PREFIX}{dead}-{secrets.token_hex(4)}",  # its maker died before close
        "live": f"{PREFIX}{live}-{secrets.token_hex(4)}",  # a live maker's, not entered yet
        "holding": f"{PREFIX}{dead}-{secrets.token_hex(4)}",  # dead maker, a process inside
        "old": f"{PREFIX}{secrets.token_hex(12)}",  # a pid-less name of before
    }
    base = PIDS / f"harness-test-{secrets.token_hex(6)}"  # a hierarchy of the test's own
    base.mkdir()
    for name in names.values():
        (base / name).mkdir()
    (base / names["holding"] / "cgroup.procs").write_text(str(holder.pid))
    try:
        swept = sweep_stale(base)
        assert swept == [names["killed"]] and not (base / names["killed"]).exists()
        later = sweep_stale(base, now=time.time() + STALE_UNNAMED_S + 1)
        assert later == [names["old"]]
        assert (base / names["live"]).is_dir() and (base / names["holding"]).is_dir()
    finally:
        holder.kill()
        holder.wait()
        for name in names.values():
            with contextlib.suppress(OSError):
                (base / name).rmdir()
        base.rmdir()
