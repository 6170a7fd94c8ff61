"""Executed-app scoring time: apps/meridian-console per trial, against the apps' own run time.

For the reference tree and the LOW tree (reference + ``low.patch``: boots, never syncs,
notifierd never reads), runs the real verification path (``--sandbox local``; with
``--docker`` the scorer container as well) once per seed and prints, per trial, the
total scoring wall time beside the time both services ran in that same run (first start
to last stop: held page, 429, three 503s, the 5.5 s page, the 4 s outage, four SIGKILLs
and respawns, two partitions, six browser journeys). Budget: 240 s per trial on 2 cores.

    python benchmarks/bench_meridian_console_scoring.py [--seeds 1] [--docker] [--json out.json]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_meridian_scoring import main


def console_timings(detail: str) -> tuple[float | None, object]:
    """(services' run seconds, browser seconds) from meridian-console's JSON ``run.timing``."""
    try:
        found = json.loads(detail or "{}")
    except ValueError:
        return None, None
    return found.get("app_run_s"), found.get("browser_s")


if __name__ == "__main__":
    sys.exit(main("apps/meridian-console", 0x7C1E000000000000, console_timings, __doc__))
