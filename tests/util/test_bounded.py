"""Bounded parsing: nesting too deep is malformed input, never a crash."""

from __future__ import annotations

import pytest

from harness.util import bounded

pytestmark = pytest.mark.unit


def test_deep_toml_and_json_are_malformed_not_a_crash() -> None:
    assert bounded.toml("x = " + "[" * 5000 + "]" * 5000) is None
    assert bounded.toml("[tool.pytest]\nx = [[1]]\n") == {"tool": {"pytest": {"x": [[1]]}}}
    assert bounded.json_value("[" * 100_000) == (False, None)
    assert bounded.json_value('{"Action": "pass"}') == (True, {"Action": "pass"})


def test_nesting_counts_the_deepest_run_and_many_flat_brackets_pass() -> None:
    assert bounded.nesting("[{}][[[]]]") == 3 and bounded.nesting("]]][") == 1
    flat = "[" + ",".join("[1]" for _ in range(1000)) + "]"  # 1,001 brackets, two deep
    assert bounded.json_value(flat)[0] is True
    assert bounded.json_value("not json") == (False, None)
    assert bounded.toml("x = ") is None
    assert bounded.json_value(" " * (bounded.MAX_BYTES + 1)) == (False, None)
