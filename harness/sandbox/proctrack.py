"""Every process a local sandbox started, found and killed, whatever it did to hide.

A process group is not enough: ``setsid`` (or a double fork) leaves it, and a daemon so
started outlived the agent phase and wrote the fix into the verifier's copy. So each
command of a local sandbox starts inside cgroups of the sandbox's own (v1 ``pids`` and
``freezer``, when the harness is root and they are mounted): a process cannot leave its
cgroup without write access to another one's ``cgroup.procs``, which only root has.
``kill_all`` freezes the group (no fork races), kills every member, thaws it and waits
until it is empty. Without cgroups (the harness is not root) the sandbox's processes are
found by a token in their environment (``/proc/<pid>/environ``): a daemon that execs
itself with a fresh environment escapes that, so it is a speed bump there, named in the
report's threat model.

A harness killed before ``close`` (SIGKILL, a power cut) leaves its empty cgroups; each
group's name carries its maker's pid, so a new tracker removes the empty groups of makers
that are gone (and empty groups of the older, pid-less names after an hour).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import time
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
CONTROLLERS = ("pids", "freezer")
TOKEN_ENV = "HARNESS_SANDBOX_TOKEN"
ROUNDS = 50
PREFIX = "harness-sandbox-"
STALE_UNNAMED_S = 3600.0


class ProcessTracker:
    """The processes of one local sandbox."""

    def __init__(self) -> None:
        self.token = secrets.token_hex(12)
        self.name = f"{PREFIX}{os.getpid()}-{self.token}"
        self.groups: dict[str, Path] = {}
        if os.geteuid() == 0:
            for controller in CONTROLLERS:
                base = CGROUP_ROOT / controller
                if not (base / "cgroup.procs").is_file():
                    continue
                sweep_stale(base)
                with contextlib.suppress(OSError):
                    (base / self.name).mkdir(exist_ok=True)
                    self.groups[controller] = base / self.name

    @property
    def walled(self) -> bool:
        """Whether membership is enforced by cgroups (else: the environment token)."""
        return "pids" in self.groups

    def env(self) -> dict[str, str]:
        return {TOKEN_ENV: self.token}

    def enter(self) -> None:
        """Put the calling process in the sandbox's cgroups (a ``preexec_fn``)."""
        for group in self.groups.values():
            with contextlib.suppress(OSError):
                (group / "cgroup.procs").write_text(str(os.getpid()))

    def members(self) -> list[int]:
        if self.walled:
            try:
                text = (self.groups["pids"] / "cgroup.procs").read_text()
            except OSError:
                return []
            return [int(p) for p in text.split() if p.strip().isdigit()]
        return _by_token(self.token)

    def kill_all(self) -> int:
        """Kill every member until none is left; the number killed."""
        killed = 0
        freezer = self.groups.get("freezer")
        for _ in range(ROUNDS):
            pids = [p for p in self.members() if p != os.getpid()]
            if not pids:
                break
            if freezer is not None:
                with contextlib.suppress(OSError):
                    (freezer / "freezer.state").write_text("FROZEN")
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
                    killed += 1
            if freezer is not None:
                with contextlib.suppress(OSError):
                    (freezer / "freezer.state").write_text("THAWED")
            time.sleep(0.05)
        return killed

    def close(self) -> None:
        """Kill what is left and remove the cgroups."""
        self.kill_all()
        for group in self.groups.values():
            for _ in range(20):
                try:
                    group.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.05)
        self.groups = {}


def sweep_stale(base: Path, *, now: float | None = None) -> list[str]:
    """Remove the empty sandbox groups under ``base`` whose maker is gone; their names.

    A group is left alone while it holds a process or its maker lives (it may be about to
    enter it); a pid-less name (before makers were named) goes once empty for an hour.
    """
    now = time.time() if now is None else now
    removed: list[str] = []
    for group in base.glob(f"{PREFIX}*"):
        maker = group.name.removeprefix(PREFIX).split("-")
        if len(maker) == 2 and maker[0].isdigit():
            if _alive(int(maker[0])):
                continue
        else:
            with contextlib.suppress(OSError):
                if now - group.stat().st_mtime < STALE_UNNAMED_S:
                    continue
        with contextlib.suppress(OSError):
            if (group / "cgroup.procs").read_text().strip():
                continue
            group.rmdir()
            removed.append(group.name)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _by_token(token: str) -> list[int]:
    """Processes whose environment carries ``token`` (those this user may read)."""
    needle = f"{TOKEN_ENV}={token}".encode()
    found: list[int] = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as fh:
                if needle in fh.read().split(b"\0"):
                    found.append(int(entry.name))
        except OSError:
            continue
    return found
