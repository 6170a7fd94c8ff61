"""Text from a workspace shown safely: control codes are shown, never obeyed."""

from __future__ import annotations

import pytest

from harness.util.escape import for_terminal, one_line

pytestmark = pytest.mark.unit


def test_control_codes_are_shown_not_obeyed() -> None:
    text = "ok\tline\nx\x1b[2K\rSUCCESS\u202e\x9b"
    assert for_terminal(text) == "ok\tline\nx\\x1b[2K\\x0dSUCCESS\\u202e\\x9b"


def test_a_workspace_value_stays_on_one_line() -> None:
    assert one_line("test_a\nPASS test_b") == "test_a\\nPASS test_b"
    assert one_line(3) == "3"
    assert for_terminal("plain ünïcode ✓") == "plain ünïcode ✓"
    assert for_terminal("\u2066hidden\u2069\x00") == "\\u2066hidden\\u2069\\x00"
