"""Rendered truth of table rows, read from what the page's script returns
(appkit/rendered.py); the page is a stand-in here (the browser tests in tests/apps
run the script in Chromium)."""

from __future__ import annotations

from typing import Any

import pytest

from harness.appkit.rendered import (
    DEFAULT_ROWS,
    ROWS_JS,
    hidden_reason,
    rendered_rows,
    shown_text,
)

pytestmark = pytest.mark.unit

ROW = {"id": "a", "cells": ["Acme", "1.00", "EUR"], "shown": [True, False, True],
       "why": ["", "ellipsis", ""], "visible": False}  # fmt: skip


def test_the_rows_are_what_the_script_returns_for_the_selector() -> None:
    asked: list[tuple[str, str]] = []

    class Page:
        def evaluate(self, script: str, selector: str) -> Any:
            asked.append((script, selector))
            return (r for r in [ROW])  # any iterable comes back a list

    assert rendered_rows(Page()) == [ROW]
    assert rendered_rows(Page(), "table#x tr") == [ROW]
    assert asked == [(ROWS_JS, DEFAULT_ROWS), (ROWS_JS, "table#x tr")]
    assert DEFAULT_ROWS == "tbody tr" and "checkVisibility" in ROWS_JS


def test_a_cell_counts_only_when_entirely_shown() -> None:
    assert shown_text(ROW, 0) == "Acme" and shown_text(ROW, 2) == "EUR"
    assert shown_text(ROW, 1) is None  # clipped with an ellipsis
    assert shown_text(ROW, 3) is None  # no such cell
    assert shown_text({"cells": ["x"], "shown": []}, 0) is None  # no verdict: not shown
    assert shown_text({"cells": [12], "shown": [True]}, 0) == "12"
    assert shown_text({}, 0) is None


def test_the_reason_names_the_first_hidden_cell() -> None:
    assert hidden_reason(ROW) == "cell 1: ellipsis"
    assert hidden_reason({"why": ["", "", "covered", "clipped"]}) == "cell 2: covered"
    assert hidden_reason({"why": ["", ""]}) == ""
    assert hidden_reason({"why": [], "displayed": False}) == "row not displayed"
