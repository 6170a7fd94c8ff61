"""Split a commit's change into code and tests, and decide whether its shape can be a task.

SWE-bench splits by path: files under a test folder (or named as tests) form the test
patch, the rest the gold patch. A candidate changes 1-15 files, at least one test file
and at least one code file, and leaves the dependencies alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Literal

from harness.authoring.mine.walk import Commit

MAX_FILES = 15
TEST_DIRS = {"test", "tests", "testing", "testdata", "e2e"}
CODE_SUFFIXES = {".go", ".py", ".pyi", ".c", ".h"}
DEPENDENCY_FILES = {"go.mod", "go.sum", "setup.py", "setup.cfg", "pyproject.toml"}
Runner = Literal["go", "pytest"]


@dataclass(frozen=True)
class Split:
    tests: list[str]  # test files at the fix commit (added or modified)
    code: list[str]  # code files the fix changes
    other: list[str]  # docs, CI, changelogs: part of the reference, never graded
    deleted_tests: list[str]


def is_test(path: str) -> bool:
    p = PurePosixPath(path)
    name = p.name
    if name.endswith("_test.go") or name == "conftest.py":
        return True
    if name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py")):
        return True
    return any(part in TEST_DIRS for part in p.parts[:-1])


def split(commit: Commit) -> Split:
    tests: list[str] = []
    code: list[str] = []
    other: list[str] = []
    deleted: list[str] = []
    for change in commit.changes:
        if is_test(change.path):
            (deleted if change.status == "D" else tests).append(change.path)
        elif PurePosixPath(change.path).suffix in CODE_SUFFIXES:
            code.append(change.path)
        else:
            other.append(change.path)
    return Split(sorted(tests), sorted(code), sorted(other), sorted(deleted))


def shape_problem(commit: Commit, parts: Split) -> str | None:
    """Why the commit cannot be a task by its shape alone; None when it can."""
    if commit.parent is None:
        return "root commit (no parent to start from)"
    n = len(commit.changes)
    if n == 0:
        return "changes no files"
    if n > MAX_FILES:
        return f"changes {n} files (at most {MAX_FILES})"
    deps = [c.path for c in commit.changes if PurePosixPath(c.path).name in DEPENDENCY_FILES]
    if deps:
        return f"changes the build or dependencies ({', '.join(deps)})"
    if not parts.tests:
        return "changes no test file"
    if not parts.code:
        return "changes no code (tests, docs or configuration only)"
    return None


def go_package(path: str) -> str:
    """The Go package directory a test file (or testdata file) belongs to."""
    parts = PurePosixPath(path).parts[:-1]
    for i, part in enumerate(parts):
        if part == "testdata":
            parts = parts[:i]
            break
    return "./" + "/".join(parts) if parts else "."


def targets_for(runner: Runner, tests: list[str]) -> list[str]:
    """The test targets that run the changed tests: Go packages, or pytest files."""
    if runner == "go":
        return sorted({go_package(p) for p in tests})
    names = [PurePosixPath(p).name for p in tests]
    return sorted(
        p
        for p, name in zip(tests, names, strict=True)
        if name.endswith(".py") and re.match(r"(test_.*|.*_test)\.py$", name)
    )
