"""Watching a running container for bombs: memory, pids, disk; and stopping its commands.

The engine's own limits hold a bomb (the memory cgroup OOM-kills, the pids cgroup refuses
forks, a full tmpfs refuses writes) but do not end it: a fork bomb spins until the
timeout. ``LimitWatch`` reads the container's cgroup counters and the fill of its
writable places from the host and names the first limit hit; ``kill_processes`` then
kills every process of the command's uid (the idle keep-alive runs as another uid and
survives, so the sandbox stays usable to copy transcripts out).

The bind-mounted workspace has no hard cap on this engine (overlay2 on ext4, no project
quotas, no xfs): it is measured (``du``) every few seconds and the command is stopped once
it is over its size or holds more entries than a verifier copies (``agentfiles.MAX_FILES``:
inodes are a resource too), so a fast writer can overshoot by what it writes in one
interval.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

from harness.util.agentfiles import MAX_FILES

CGROUP_ROOT = Path("/sys/fs/cgroup")
TMPFS_SLACK = 1024 * 1024  # a tmpfs with less than this free counts as full


def cgroup_dir(controller: str, container_id: str, parent: str = "") -> Path | None:
    """The host folder of a container's cgroup (v1) for ``controller``, if visible here."""
    candidates = [
        CGROUP_ROOT / controller / (parent.strip("/") or "docker") / container_id,
        CGROUP_ROOT / controller / "system.slice" / f"docker-{container_id}.scope",
    ]
    for path in candidates:
        if path.is_dir():
            return path
    return None


def _counter(path: Path | None, file: str, key: str) -> int:
    if path is None:
        return 0
    try:
        for line in (path / file).read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    except (OSError, ValueError):
        return 0
    return 0


def tree_bytes(root: Path) -> int:
    """Bytes below ``root``: each file counts the larger of its disk blocks and its
    apparent size (a sparse file costs what it claims), hard links counted once."""
    return tree_usage(root)[0]


def tree_usage(root: Path, max_entries: int | None = None) -> tuple[int, int]:
    """(bytes, entries) below ``root`` (bytes as ``tree_bytes``); counting stops once
    over ``max_entries``."""
    total, seen, count = 0, set(), 0
    stack = [str(root)]
    while stack:
        if max_entries is not None and count > max_entries:
            break
        try:
            entries = os.scandir(stack.pop())
        except OSError:
            continue
        with entries:
            for entry in entries:
                count += 1
                if max_entries is not None and count > max_entries:
                    return total, count  # over the cap: counting further tells nothing
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if info.st_nlink > 1:
                    if (info.st_dev, info.st_ino) in seen:
                        continue
                    seen.add((info.st_dev, info.st_ino))
                claimed = info.st_size if stat.S_ISREG(info.st_mode) else 0
                total += max(info.st_blocks * 512, claimed)
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
    return total, count


@dataclass
class LimitWatch:
    """The counters of one container at the start of a command, and what changed since."""

    container_id: str
    cgroup_parent: str = ""
    tmpfs: dict[str, Path] = field(default_factory=dict)  # name -> host mountpoint
    workspace: Path | None = None
    workspace_cap: int | None = None
    skip: set[str] = field(default_factory=set)  # places already reported full
    hit: str = ""  # the place of the last disk limit found
    _memory: Path | None = None
    _pids: Path | None = None
    _oom0: int = 0
    _pidmax0: int = 0
    _next_du: float = 0.0
    _du_every: float = 1.0

    def __post_init__(self) -> None:
        self._memory = cgroup_dir("memory", self.container_id, self.cgroup_parent)
        self._pids = cgroup_dir("pids", self.container_id, self.cgroup_parent)
        self._oom0 = _counter(self._memory, "memory.oom_control", "oom_kill")
        self._pidmax0 = _counter(self._pids, "pids.events", "max")

    @property
    def sees_cgroups(self) -> bool:
        return self._memory is not None and self._pids is not None

    def check(self) -> tuple[str, str] | None:
        """``(limit, detail)`` for the first limit hit since the start, else None."""
        oom = _counter(self._memory, "memory.oom_control", "oom_kill") - self._oom0
        if oom > 0:
            return "memory", f"the memory limit was hit ({oom} process(es) OOM-killed)"
        refused = _counter(self._pids, "pids.events", "max") - self._pidmax0
        if refused > 0:
            return "pids", f"the process limit was hit ({refused} fork(s) refused)"
        for name, mount in self.tmpfs.items():
            if name in self.skip:
                continue
            try:
                st = os.statvfs(mount)
            except OSError:
                continue
            size = st.f_blocks * st.f_frsize
            if size and st.f_bavail * st.f_frsize < min(TMPFS_SLACK, size // 100 + 1):
                self.hit = name
                return "disk", f"{name} is full ({size // 1024**2} MiB)"
        if (
            self.workspace is not None
            and self.workspace_cap is not None
            and "workspace" not in self.skip
        ):
            now = time.monotonic()
            if now >= self._next_du:
                used, entries = tree_usage(self.workspace, MAX_FILES)
                spent = time.monotonic() - now
                self._next_du = time.monotonic() + max(self._du_every, 10 * spent)
                if entries > MAX_FILES:  # inodes are a resource as bytes are
                    self.hit = "workspace"
                    return "disk", (
                        f"the workspace holds over {MAX_FILES} entries (files, folders, links)"
                    )
                if used > self.workspace_cap:
                    self.hit = "workspace"
                    return "disk", (
                        f"the workspace holds {used / 1024**2:.0f} MiB, over its "
                        f"{self.workspace_cap / 1024**2:.0f} MiB cap"
                    )
        return None


def host_pids(container_id: str, keep: set[int], cgroup_parent: str = "") -> list[int] | None:
    """Host pids of the container's processes but ``keep`` (None: not visible from here)."""
    group = cgroup_dir("pids", container_id, cgroup_parent)
    if group is None or os.geteuid() != 0 or not keep:
        return None
    try:
        pids = [int(x) for x in (group / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return None
    return [pid for pid in pids if pid not in keep]


def keepalive_pids(init_pid: int) -> set[int]:
    """The container's init (host pid) and its children at start: the idle keep-alive."""
    if not init_pid:
        return set()
    for _ in range(50):  # init forks the keep-alive just after the engine says "started"
        try:
            text = Path(f"/proc/{init_pid}/task/{init_pid}/children").read_text()
        except OSError:
            return set()
        if text.split():
            return {init_pid, *(int(x) for x in text.split())}
        time.sleep(0.02)
    return set()  # not seen: limits fall back to a kill from inside


def kill_host_pids(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
