"""``harness mine``: a commit split into code, tests and the rest; its shape; targets per
runner."""

from __future__ import annotations

import pytest

from harness.authoring.mine.split import go_package, is_test, shape_problem, split, targets_for
from harness.authoring.mine.walk import Change, Commit

pytestmark = pytest.mark.unit


def commit(*changes: tuple[str, str], parents: tuple[str, ...] = ("p" * 40,)) -> Commit:
    return Commit("c" * 40, parents, "2024-01-10", "fix", tuple(Change(s, p) for s, p in changes))


def test_test_files_are_told_from_code() -> None:
    assert is_test("decimal_test.go") and is_test("cmp/testdata/diffs")
    assert is_test("tests/test_split.py") and is_test("toolz/tests/helper.py")
    assert is_test("test_schema.py") and is_test("pkg/foo_test.py") and is_test("conftest.py")
    assert not is_test("decimal.go") and not is_test("src/testing_tools.py")
    assert not is_test("attestation.py")


def test_split_and_shape() -> None:
    c = commit(("M", "decimal.go"), ("M", "decimal_test.go"), ("M", "CHANGELOG.md"))
    parts = split(c)
    assert parts.code == ["decimal.go"] and parts.tests == ["decimal_test.go"]
    assert parts.other == ["CHANGELOG.md"]
    assert shape_problem(c, parts) is None
    only_tests = commit(("M", "a_test.go"))
    assert shape_problem(only_tests, split(only_tests)) == (
        "changes no code (tests, docs or configuration only)"
    )
    no_tests = commit(("M", "a.go"))
    assert shape_problem(no_tests, split(no_tests)) == "changes no test file"
    deps = commit(("M", "a.go"), ("M", "a_test.go"), ("M", "go.mod"))
    assert "dependencies (go.mod)" in str(shape_problem(deps, split(deps)))
    many = commit(*[("M", f"f{i}.go") for i in range(15)], ("A", "x_test.go"))
    assert shape_problem(many, split(many)) == "changes 16 files (at most 15)"
    root = commit(("A", "a.go"), ("A", "a_test.go"), parents=())
    assert "root commit" in str(shape_problem(root, split(root)))


def test_targets_per_runner() -> None:
    assert go_package("cmp/testdata/diffs") == "./cmp"
    assert go_package("x_test.go") == "."
    assert targets_for("go", ["a_test.go", "cmp/cmpopts/util_test.go", "cmp/testdata/d"]) == [
        ".",
        "./cmp",
        "./cmp/cmpopts",
    ]
    assert targets_for("pytest", ["tests/test_a.py", "tests/data.json", "tests/conftest.py"]) == [
        "tests/test_a.py"
    ]
