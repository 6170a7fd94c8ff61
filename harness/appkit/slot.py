"""One executed-app scorer at a time per machine, whatever ``--concurrency`` says.

App checks measure time (backoff gaps, waiting through a slow answer, health budgets),
so two apps scored side by side on a 2-core machine would grade each other's CPU
contention. ``scoring_slot`` takes an exclusive ``flock`` on a machine-wide file before
an executed suite runs and releases it after; test-only scenarios skip it. The wait and
the policy are returned for the report.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from harness.config.settings import env_value

POLICY = "executed-app scoring runs one at a time per machine (file lock)"


def lock_path() -> Path:
    """The machine-wide lock file (``HARNESS_SCORER_LOCK`` overrides, for tests)."""
    given = env_value("SCORER_LOCK")
    return Path(given) if given else Path(tempfile.gettempdir()) / "harness-app-scorer.lock"


@contextlib.contextmanager
def scoring_slot(executes_app: bool) -> Iterator[dict[str, Any]]:
    """Hold the machine's app-scoring slot while the body runs (a no-op when not needed).

    Yields a dict the caller puts in its report: ``policy``, ``lock`` and, once the slot
    is held, ``waited_s``.
    """
    info: dict[str, Any] = {"policy": POLICY if executes_app else "no executed app: no lock"}
    if not executes_app:
        yield info
        return
    path = lock_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        info.update(lock=str(path), waited_s=round(time.monotonic() - start, 3))
        yield info
    finally:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
