"""What the app-scoring slot's log says about a test run: ``python scripts/slot_chain.py LOG [T0]``.

Each executed-app scoring holds the machine's slot alone (``harness.appkit.slot``),
so the holds form a serial chain: the test stage cannot end before it does. ``.ci/run``
sets ``HARNESS_SLOT_LOG`` and prints this after the tests: how long the chain is, when it
began and ended relative to the stage's start ``T0`` (epoch seconds), how long the slot
sat idle inside that span, its longest idle gaps (the holds on either side: what the
chain waited on), and who held it longest.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def summarize(rows: Iterable[dict[str, Any]], t0: float | None = None, top: int = 8) -> list[str]:
    """The summary's lines (pure: rows as logged, one dict per hold)."""
    holds = sorted(rows, key=lambda r: float(r.get("began", 0.0)))
    if not holds:
        return ["::: app-scoring slot: no holds logged"]
    held = sum(float(r["held_s"]) for r in holds)
    waited = sum(float(r["waited_s"]) for r in holds)
    lines = [
        f"::: app-scoring slot: {len(holds)} holds, {held:.0f}s held in a row, {waited:.0f}s waited"
    ]
    if all("began" in r for r in holds):
        first = float(holds[0]["began"])
        last = max(float(r["began"]) + float(r["held_s"]) for r in holds)
        gaps = _gaps(holds)
        idle = sum(gap for gap, *_ in gaps)  # from the same walk as the gaps listed
        where = "" if t0 is None else f" (+{first - t0:.0f}s to +{last - t0:.0f}s of the tests)"
        lines.append(f"::: chain span {last - first:.0f}s{where}, slot idle {idle:.0f}s in it")
        base = first if t0 is None else t0  # offsets, never epoch seconds
        lines += [
            f":::   idle {gap:5.0f}s at +{at - base:.0f}s: after {after}, before {nxt}"
            for gap, at, after, nxt in sorted(gaps, key=lambda g: -g[0])[:top]
            if gap >= 10.0
        ]
    by: dict[str, float] = {}
    for r in holds:
        who = _who(r)
        by[who] = by.get(who, 0.0) + float(r["held_s"])
    lines += [
        f":::   {s:6.0f}s  {who}" for who, s in sorted(by.items(), key=lambda kv: -kv[1])[:top]
    ]
    return lines


def _who(row: dict[str, Any]) -> str:
    return str(row.get("who") or "?").split(" (")[0]


def _gaps(holds: list[dict[str, Any]]) -> list[tuple[float, float, str, str]]:
    """Every stretch with nobody holding the slot (holds sorted by start; an overlapping
    hold is no gap): its length, start, and who held the slot before and after it."""
    gaps: list[tuple[float, float, str, str]] = []
    end, before = float(holds[0]["began"]), holds[0]
    for row in holds:
        began = float(row["began"])
        if began > end:
            gaps.append((began - end, end, _who(before), _who(row)))
        if began + float(row["held_s"]) >= end:
            end, before = began + float(row["held_s"]), row
    return gaps


def main(argv: list[str]) -> int:
    log = Path(argv[0])
    t0 = float(argv[1]) if len(argv) > 1 else None
    rows = [json.loads(x) for x in log.read_text(encoding="utf-8").splitlines() if x.strip()]
    print("\n".join(summarize(rows, t0)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
