"""The machine's app-scoring slot as trials and controls take it, each hold logged.

The lock itself is the app kit's (``harness.appkit.slot``, part of every app
suite's scorer fingerprint, so it changes only with a recalibration). What a hold costs is
measurement, not grading, and lives here: with ``HARNESS_SLOT_LOG`` set, each hold of an
executed app appends one JSON line there (who, ``began``, ``waited_s``, ``held_s``), so a
test run can print the serial chain those holds form (``scripts/slot_chain.py``).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from collections.abc import Iterator
from typing import Any

from harness.appkit.slot import scoring_slot
from harness.config.settings import env_value, read_env


@contextlib.contextmanager
def take_slot(executes_app: bool) -> Iterator[dict[str, Any]]:
    """``scoring_slot(executes_app)``, the hold logged to ``HARNESS_SLOT_LOG`` when set."""
    with scoring_slot(executes_app) as info:
        began, held = time.time(), time.monotonic()
        try:
            yield info
        finally:
            if executes_app:
                _log_hold(float(info.get("waited_s", 0.0)), began, time.monotonic() - held)


def _log_hold(waited_s: float, began: float, held_s: float) -> None:
    """One line per hold (appends this small are atomic)."""
    target = env_value("SLOT_LOG")
    if not target:
        return
    # who held it: the test that ran it (pytest names it in the environment), else argv
    who = read_env("PYTEST_CURRENT_TEST") or " ".join(sys.argv[:4])
    line = json.dumps(
        {
            "pid": os.getpid(),
            "who": who,
            "began": round(began, 3),  # wall clock: the chain's span and its gaps
            "waited_s": waited_s,
            "held_s": round(held_s, 3),
        }
    )
    with contextlib.suppress(OSError), open(target, "a", encoding="utf-8") as fh:
        fh.write(line + "\n")
