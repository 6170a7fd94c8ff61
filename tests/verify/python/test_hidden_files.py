"""The hidden suite's Python files, listed read-only for the peek guard."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from harness.verify.python.hidden_files import listing, write_listing

pytestmark = pytest.mark.unit


def test_only_python_files_are_listed_once_in_order() -> None:
    hidden = ["tests/test_b.py", "tests/data.json", "tests/test_a.py", "tests/test_b.py"]
    assert listing(hidden) == "tests/test_a.py\ntests/test_b.py\n"
    assert listing(["bad\nname.py"]) == ""


def test_the_listing_is_read_only_and_absent_when_empty(tmp_path: Path) -> None:
    assert write_listing(tmp_path, ["tests/data.json"]) is None
    assert not (tmp_path / "hidden-files.txt").exists()
    path = write_listing(tmp_path, ["tests/test_a.py"])
    assert path == tmp_path / "hidden-files.txt"
    assert path.read_text() == "tests/test_a.py\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o444
