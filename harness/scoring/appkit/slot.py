"""One executed-app scorer at a time per machine, whatever ``--concurrency`` says.

App checks measure time (backoff gaps, waiting through a slow answer, health budgets),
so two apps scored side by side on a 2-core machine would grade each other's CPU
contention. ``scoring_slot`` takes an exclusive ``flock`` on a machine-wide file before
an executed suite runs and releases it after; test-only scenarios skip it. The wait and
the policy are returned for the report. With ``HARNESS_SLOT_LOG`` set, each hold appends
one JSON line there (``waited_s``, ``held_s``): what the serial chain of app scorings
costs a test run (``.ci/run`` prints its sum).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from harness.config.settings import env_value, read_env

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
    held = None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        info.update(lock=str(path), waited_s=round(time.monotonic() - start, 3))
        held = time.monotonic()
        yield info
    finally:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
        if held is not None:
            _log_hold(info.get("waited_s", 0.0), time.monotonic() - held)


def _log_hold(waited_s: float, held_s: float) -> None:
    """One line per hold in ``HARNESS_SLOT_LOG`` (appends are atomic at this size)."""
    target = env_value("SLOT_LOG")
    if not target:
        return
    # who held it: the test that ran it (pytest names it in the environment), else argv
    who = read_env("PYTEST_CURRENT_TEST") or " ".join(sys.argv[:4])
    line = json.dumps(
        {"pid": os.getpid(), "who": who, "waited_s": waited_s, "held_s": round(held_s, 3)}
    )
    with contextlib.suppress(OSError), open(target, "a", encoding="utf-8") as fh:
        fh.write(line + "\n")
