"""Token mutation operators for Go and JavaScript: never inside strings or comments."""

from __future__ import annotations

import pytest

from harness.grader.mutants import text_ops

pytestmark = pytest.mark.unit


def test_strings_comments_and_unary_signs_are_left_alone() -> None:
    source = 'if (a < b && s === "x < y") { n = -1 } // a < b\n/* x > y */ v := <-ch\n'
    found = [(s.before, s.after) for s in text_ops.sites(source)]
    assert ("<", "<=") in found and ("&&", "||") in found and ("===", "!==") in found
    assert ("1", "2") in found and ("1", "0") in found
    assert ("-", "+") not in found  # the unary minus
    assert all(s.line == 1 for s in text_ops.sites(source))  # the comment and <-ch: none


def test_apply_changes_one_token() -> None:
    source = "return total + fee;"
    (site,) = [s for s in text_ops.sites(source) if s.operator == "arithmetic"]
    assert text_ops.apply(source, site) == "return total - fee;"


def test_template_literals_are_strings() -> None:
    assert not list(text_ops.sites("const s = `${a} < ${b}`;"))
