"""What a definition-level carry holds equal besides the Python (grader/defs_folders.py):
every other entry of the suite folder (files, modes, empty folders, no links; a tool
cache's bytecode aside) and the scenario's grading files outside it."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.grader.defs_folders import scenario_files_differ, suite_folder_differs

pytestmark = pytest.mark.unit


def _scenario(root: Path) -> Path:
    suite = root / "scenario" / "suite"
    (suite / "fixtures").mkdir(parents=True)
    (suite / "suite.py").write_text("X = 1\n")
    (suite / "fixtures" / "data.txt").write_text("fixture\n")
    (suite / "thresholds.yml").write_text("high: 0.9\n")
    (root / "scenario" / "SPEC.md").write_text("the spec\n")
    (root / "scenario" / "README.md").write_text("a page\n")
    return suite


def _differs(tmp_path: Path, edit: Callable[[Path], object]) -> list[str]:
    old, new = _scenario(tmp_path / "old"), _scenario(tmp_path / "new")
    edit(new)
    return suite_folder_differs(old, new, frozenset({"README.md"})) + scenario_files_differ(
        old, new
    )


def test_the_same_folders_and_a_split_s_new_modules_are_equal(tmp_path: Path) -> None:
    def split(suite: Path) -> None:
        (suite / "checks.py").write_text("Y = 2\n")
        (suite / "parts").mkdir()
        (suite / "parts" / "__init__.py").write_text("")
        (suite / "__pycache__").mkdir()
        (suite / "__pycache__" / "checks.cpython-311.pyc").write_bytes(b"\0")
        (suite / "README.md").write_text("restyled\n")
        (suite.parent / "README.md").write_text("restyled\n")

    assert _differs(tmp_path, split) == []


EDITS: dict[str, Callable[[Path], object]] = {
    "a data file changed": lambda s: (s / "fixtures" / "data.txt").write_text("other\n"),
    "a data file added": lambda s: (s / "extra.json").write_text("{}"),
    "a file hidden in a tool's cache": lambda s: (
        (s / "__pycache__").mkdir(),
        (s / "__pycache__" / "flag.json").write_text("1"),
    ),
    "an empty folder added": lambda s: (s / "empty").mkdir(),
    "a file made executable": lambda s: (s / "fixtures" / "data.txt").chmod(0o755),
    "a Python file made executable": lambda s: (s / "suite.py").chmod(0o755),
    "a file replaced by a link": lambda s: (
        (s / "fixtures" / "data.txt").unlink(),
        os.symlink(s.parent / "SPEC.md", s / "fixtures" / "data.txt"),
    ),
    "a folder linked from outside": lambda s: os.symlink(s.parent, s / "outside"),
    "the SPEC beside the suite changed": lambda s: (s.parent / "SPEC.md").write_text("new\n"),
    "a file added beside the suite": lambda s: (s.parent / "notes.txt").write_text("1\n"),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_an_edit_outside_the_suite_s_python_is_named(edit: str, tmp_path: Path) -> None:
    got = _differs(tmp_path, EDITS[edit])
    assert got, edit
    assert all("\n" not in line for line in got)
