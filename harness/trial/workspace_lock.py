"""One harness process per workspace: a lock file beside it holds the owner's pid.

``holding(workspace)`` takes an exclusive ``flock`` on a lock file named after the
workspace's path in the harness cache (``<cache>/locks/workspace-<hash>.lock``: the
workspace tree itself gets nothing, so a refused run still writes nothing); a second
``harness exec``/``setup``/``run-agent``/``verify`` of the same workspace is refused with
one line naming the owner (exit 2) instead of both trials breaking each other. The kernel
drops the lock when its process dies, so a stale lock (a killed run) is recovered by the
next taker. Jobs give every trial a workspace of its own and never meet here.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

from harness.errors import UserError


def lock_path(workspace: Path) -> Path:
    from harness.config.settings import cache_dir

    digest = hashlib.sha256(str(workspace.resolve()).encode()).hexdigest()[:16]
    return cache_dir() / "locks" / f"workspace-{digest}.lock"


@contextlib.contextmanager
def holding(workspace: Path) -> Iterator[None]:
    """Hold ``workspace`` for this process while the block runs (see the module doc)."""
    path = lock_path(workspace)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            owner = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            raise UserError(
                f"the workspace is in use by another harness process (pid {owner})",
                file=workspace,
                field="(workspace)",
                fix="wait for it to finish or stop it; parallel trials: `harness run`",
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)  # releases the lock
