"""Task dates for ``report --tasks-after``: a scenario's ``task-date`` (the day its task
came to be, e.g. a mined fix commit's date), read from its ``scenario.yml``.

Read leniently, straight from the YAML, so a report never fails on a scenario file it
only needs one field of; a scenario without the field (or no longer on disk) has no
date and is left out by the filter, which says how many it left out.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from pathlib import Path

import yaml

from harness.scenario import SCENARIO_FILE, scenario_dir

TASK_DATE_FIELD = "task-date"


def _iso(value: object) -> str | None:
    if isinstance(value, dt.datetime):
        return value.date().isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value.strip()[:10]).isoformat()
        except ValueError:
            return None
    return None


def task_date(name: str, root: Path) -> str | None:
    """The ISO task date of scenario ``name`` under ``root``, or None."""
    try:
        text = (scenario_dir(name, root) / SCENARIO_FILE).read_text(encoding="utf-8")
        data = yaml.safe_load(text)
    except (OSError, ValueError, yaml.YAMLError):
        return None
    return _iso(data.get(TASK_DATE_FIELD)) if isinstance(data, dict) else None


def task_dates(names: Iterable[str], root: Path) -> dict[str, str | None]:
    """``task_date`` of each distinct name."""
    return {name: task_date(name, root) for name in set(names)}
