"""Scenario versions in summaries: a row never mixes two versions of one scenario.

Runs of a scenario that appears in several versions within one era are put in a table
of their own per version (``<era> (<scenario> v<version>)``); runs of every other
scenario stay in the era's table.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Protocol

from harness.scenario.model import FOLDER_VERSION, base_name


class _Run(Protocol):
    era: str
    scenario: str
    report: dict[str, Any]
    meta: dict[str, Any]


def version_of(run: _Run) -> str:
    value = run.report.get("scenario_version") or run.meta.get("scenario_version")
    if value:
        return str(value)
    match = FOLDER_VERSION.search(run.scenario)
    return match.group(1) if match else "unknown"


def table_keys(runs: list[Any]) -> list[str]:
    """The table each run belongs in (parallel to ``runs``)."""
    seen: dict[tuple[str, str], set[str]] = defaultdict(set)
    for r in runs:
        seen[(r.era, base_name(r.scenario))].add(version_of(r))
    keys = []
    for r in runs:
        base = base_name(r.scenario)
        if len(seen[(r.era, base)]) > 1:
            keys.append(f"{r.era} ({base} v{version_of(r)})")
        else:
            keys.append(r.era)
    return keys
