"""The agent's Python files listed for the plugins that charge the code under test
(verify/python/agent_files.py)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from harness.verify.python.agent_files import listing, place, write_listing

pytestmark = pytest.mark.unit


def test_the_listing_holds_the_agents_python_files_once_sorted() -> None:
    changed = ["pkg/b.py", "README.md", "pkg/a.py", "pkg/b.py", "tests/test_hidden.py"]
    assert listing(changed, ["tests/test_hidden.py"]) == "pkg/a.py\npkg/b.py\n"
    many = [f"m{i}.py" for i in (7, 3, 9, 1, 5, 8, 2, 6, 4)]
    assert listing(many, []).split() == sorted(many)


def test_a_name_with_a_newline_cannot_add_a_line() -> None:
    assert listing(["ok.py", "evil\nother.py"], []) == "ok.py\n"


def test_nothing_to_list_writes_nothing(tmp_path: Path) -> None:
    assert listing(["notes.txt"], []) == ""
    assert write_listing(tmp_path, ["notes.txt", "h.py"], ["h.py"]) is None
    assert list(tmp_path.iterdir()) == []


def test_the_listing_is_written_read_only(tmp_path: Path) -> None:
    path = write_listing(tmp_path, ["calc.py"], [])
    assert path == tmp_path / "agent-files.txt"
    assert path.read_text(encoding="utf-8") == "calc.py\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o444
    other = place(tmp_path / "other.txt", "x\n")
    assert other is not None and stat.S_IMODE(other.stat().st_mode) == 0o444
