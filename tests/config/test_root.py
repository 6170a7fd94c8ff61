"""The project root: HARNESS_HOME when set, else the start folder or a parent holding
agents.yml, and where it looked."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.config.root import find_project
from tests.config.test_settings import make_project

pytestmark = pytest.mark.unit


def test_home_and_walk_up(tmp_path: Path) -> None:
    root = make_project(tmp_path / "proj")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert find_project(elsewhere, str(root)).root == root.resolve()
    assert find_project(root / "scenarios").root == root.resolve()
    lookup = find_project(elsewhere)
    assert lookup.root is None and lookup.looked[0] == elsewhere.resolve()
    assert find_project(root, str(elsewhere)).root is None  # HOME is taken as given
