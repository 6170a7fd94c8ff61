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


class ProcessTracker:
    """The processes of one local sandbox."""

    def __init__(self) -> None:
        self.token = secrets.token_hex(12)
        self.name = f"harness-sandbox-{self.token}"
        self.groups: dict[str, Path] = {}
        if os.geteuid() == 0:
            for controller in CONTROLLERS:
                base = CGROUP_ROOT / controller
                if not (base / "cgroup.procs").is_file():
                    continue
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
