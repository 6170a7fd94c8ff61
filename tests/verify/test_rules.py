"""Modification rules (pure), and goagentbench's own matcher's answers as the reference."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.verify.rules import check_rules, clean, matches

pytestmark = pytest.mark.unit
DIRS = {"internal/sorting", "internal", "tests", "pkg", "tests/x"}
TABLE: dict[str, Any] = json.loads(
    (Path(__file__).parent / "data" / "gab_rule_matches.json").read_text()
)


def is_dir(p: str) -> bool:
    return p in DIRS


def _table_dirs() -> set[str]:
    found = {"."}
    for d in TABLE["dirs"]:
        parts = d.split("/")
        found |= {"/".join(parts[:n]) for n in range(1, len(parts) + 1)}
    return found


def test_matching_is_goagentbench_s_own() -> None:
    """Every (rule, path) answer of goagentbench's pathMatchesRule, produced by its code."""
    dirs = _table_dirs()
    wrong = [
        (rule, path, match)
        for rule, path, match in TABLE["matches"]
        if matches(path, rule, lambda e: e in dirs) is not match
    ]
    assert len(TABLE["matches"]) > 1000 and wrong == []


def _gab_changes(row: dict[str, Any]) -> list[str]:
    """What harness's changed-files list holds for a scenario row of the table."""
    return sorted({*(row["write"] or []), *(row["delete"] or [])})


# The table rows where harness decides otherwise on purpose (docs/GOAGENTBENCH.md):
# committed changes count (goagentbench diffs against HEAD), and so do files a
# .gitignore names (harness reads no ignore file the agent could write).
DELIBERATE = {"committed change", "ignored file"}


@pytest.mark.parametrize("row", TABLE["scenarios"], ids=lambda r: str(r["name"]))
def test_rule_verdicts_are_goagentbench_s(row: dict[str, Any]) -> None:
    dirs = {"a", "cmd", "cmd/tool", "docs", "docs/sub", "internal", "internal/a", "internal/q"}
    dirs |= {"internal/q/tui", "internal/q/tui/goldens", "internal/sorting", "."}
    for w in row["write"] or []:
        parts = w.split("/")[:-1]
        dirs |= {"/".join(parts[:n]) for n in range(1, len(parts) + 1)}
    res = check_rules(
        _gab_changes(row),
        row["must_modify"] or [],
        row["no_modify"] or [],
        [],
        lambda e: e in dirs,
        "goagentbench",
    )
    holds = all(r.ok for r in res)
    if row["name"] in DELIBERATE:
        assert row["problems"] and holds  # goagentbench fails it; harness counts the change
    else:
        assert holds is (not row["problems"]), row["problems"]


def test_goagentbench_directories_are_not_recursive_for_either_rule() -> None:
    """Issue 50: a no-modify directory does not cover nested files; a glob never crosses
    '/' (codalotl/tui_build's `internal/q/tui/golden*` leaves goldens/x.txt alone)."""
    gab = check_rules(
        ["docs/sub/y.md", "internal/q/tui/goldens/x.txt", "internal/a/b.go"],
        ["internal/*.go"],
        ["docs", "internal/q/tui/golden*"],
        [],
        lambda e: e in {"docs", "docs/sub", "internal", "internal/a"},
        "goagentbench",
    )
    assert [r.ok for r in gab] == [False, True, True]


def test_harness_dialect_covers_below_and_double_star_crosses() -> None:
    res = check_rules(
        ["tests/x/y.py", "docs/sub/y.md", "internal/q/tui/goldens/x.txt"],
        [],
        ["tests/**", "docs", "internal/q/tui/golden*"],
        [],
        lambda e: e in {"tests", "tests/x", "docs", "docs/sub"},
        "harness",
    )
    assert [r.ok for r in res] == [False, False, False]


def test_goagentbench_ignores_root_dotfiles_only() -> None:
    res = check_rules(
        [".env", "internal/.hidden"], [], ["*", "internal"], [], is_dir, "goagentbench"
    )
    assert [r.ok for r in res] == [True, False]


def test_must_modify_directory_is_not_recursive() -> None:
    assert matches("internal/sorting/a.go", "internal/sorting", is_dir)
    assert not matches("internal/sorting/sub/a.go", "internal/sorting", is_dir)
    assert matches("internal/sorting/a.go", "./internal/sorting/", is_dir)


def test_globs_and_exact_files() -> None:
    assert matches("internal/q/tui/golden_a.txt", "internal/q/tui/golden*", is_dir)
    assert matches("SPEC.md", "SPEC.md", is_dir)
    assert not matches("SPEC.md.bak", "SPEC.md", is_dir)
    assert not matches("tests/x/y.py", "tests/**", is_dir)
    assert matches("tests/x/y.py", "tests/**", is_dir, deep=True)
    assert not matches("a.go", "a[", is_dir)  # malformed: nothing


def test_clean_is_go_s() -> None:
    assert [clean(p) for p in ("", "./a/", "a//b", "//a", "a/../b", "/..")] == [
        ".",
        "a",
        "a/b",
        "/a",
        "b",
        "/",
    ]


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
