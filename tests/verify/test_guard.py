"""Which folders a test target covers, the scope the guard restores and checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.verify.guard import target_scopes

pytestmark = pytest.mark.unit


def test_target_scopes(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text("")
    assert target_scopes("pytest", "tests/test_a.py::test_x -k y", tmp_path) == ["tests"]
    assert target_scopes("pytest", "tests", tmp_path) == ["tests"]
    assert target_scopes("go", "./mathx -run 'TestAbs'", tmp_path) == ["mathx"]
    assert target_scopes("go", "./...", tmp_path) == ["."]
    assert target_scopes("go", "./pkg/...", tmp_path) == ["pkg"]
