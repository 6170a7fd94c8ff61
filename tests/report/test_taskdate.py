"""Task dates for ``report --tasks-after``: read leniently from a scenario's ``scenario.yml``."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.report.taskdate import task_date, task_dates

pytestmark = pytest.mark.unit


def _scenario(root: Path, name: str, text: str) -> None:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "scenario.yml").write_text(text)


def test_a_date_is_read_as_iso_from_a_date_a_timestamp_or_a_string(tmp_path: Path) -> None:
    _scenario(tmp_path, "go/a", "task-date: 2024-03-05\n")
    _scenario(tmp_path, "go/b", "task-date: 2024-03-06T10:00:00Z\n")
    _scenario(tmp_path, "go/c", "task-date: '2024-03-07 whatever'\n")
    assert task_date("go/a", tmp_path) == "2024-03-05"
    assert task_date("go/b", tmp_path) == "2024-03-06"
    assert task_date("go/c", tmp_path) == "2024-03-07"


def test_a_scenario_without_a_readable_date_has_none(tmp_path: Path) -> None:
    _scenario(tmp_path, "go/none", "name: x\n")
    _scenario(tmp_path, "go/bad", "task-date: soon\n")
    _scenario(tmp_path, "go/list", "- 1\n")
    _scenario(tmp_path, "go/yaml", "task-date: [\n")
    for name in ("go/none", "go/bad", "go/list", "go/yaml", "go/gone"):
        assert task_date(name, tmp_path) is None, name


def test_task_dates_maps_each_distinct_name(tmp_path: Path) -> None:
    _scenario(tmp_path, "go/a", "task-date: 2024-03-05\n")
    assert task_dates(["go/a", "go/a", "go/gone"], tmp_path) == {
        "go/a": "2024-03-05",
        "go/gone": None,
    }
