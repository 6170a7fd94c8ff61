"""Modification rules (pure)."""

from __future__ import annotations

import pytest

from harness.verify.rules import check_rules, matches

pytestmark = pytest.mark.unit
DIRS = {"internal/sorting", "internal", "tests", "pkg"}


def is_dir(p: str) -> bool:
    return p in DIRS


def test_must_modify_directory_is_not_recursive() -> None:
    assert matches("internal/sorting/a.go", "internal/sorting", is_dir, recursive=False)
    assert not matches("internal/sorting/sub/a.go", "internal/sorting", is_dir, recursive=False)
    assert matches("internal/sorting/sub/a.go", "internal/sorting/", is_dir, recursive=True)


def test_globs_and_exact_files() -> None:
    assert matches("internal/q/tui/golden_a.txt", "internal/q/tui/golden*", is_dir, recursive=True)
    assert matches("SPEC.md", "SPEC.md", is_dir, recursive=True)
    assert not matches("SPEC.md.bak", "SPEC.md", is_dir, recursive=True)
    assert matches("tests/x/y.py", "tests/**", is_dir, recursive=True)


def test_rules_report_each_entry() -> None:
    changed = ["internal/sorting/sort.go", "tests/test_a.py", "README.md"]
    res = check_rules(changed, ["internal/sorting", "pkg"], ["tests"], ["internal"], is_dir)
    by = {(r.rule, r.entry): r.ok for r in res}
    assert by[("must-modify", "internal/sorting")] is True
    assert by[("must-modify", "pkg")] is False
    assert by[("no-modify", "tests")] is False
    assert by[("only-modify", "internal")] is False
    assert "README.md" in res[-1].detail


def test_no_changes_breaks_must_modify_only() -> None:
    res = check_rules([], ["pkg"], ["tests"], [], is_dir)
    assert [r.ok for r in res] == [False, True]
