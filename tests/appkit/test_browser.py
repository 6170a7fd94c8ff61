"""The browser's parts that need no browser (appkit/browser.py): where Chromium is,
what a probe counts as visible, evidence names, requests kept on loopback, a journey's
steps; the page is a stand-in here (tests/apps drive Chromium)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from harness.appkit.browser import (
    CHROMIUM,
    Journey,
    PageProbe,
    _local_only,
    _safe_name,
    chromium_path,
)

pytestmark = pytest.mark.unit


def test_chromium_is_debians_unless_told(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HARNESS_CHROMIUM", raising=False)
    assert chromium_path() == CHROMIUM == Path("/usr/bin/chromium")
    monkeypatch.setenv("HARNESS_CHROMIUM", "/opt/chrome/chrome")
    assert chromium_path() == Path("/opt/chrome/chrome")


def test_a_probe_lists_the_rows_a_user_can_see() -> None:
    rows = [{"id": "a", "visible": True}, {"id": "b", "visible": False}, {"id": "c"}]
    probe = PageProbe(url="u", status=200, visible_rows=1, total_rows=3, rows=rows)
    assert probe.visible == [{"id": "a", "visible": True}]


def test_evidence_names_are_safe_file_names() -> None:
    assert _safe_name("after sync: 2/3") == "after-sync-2-3"
    assert _safe_name("../../etc") == "..-..-etc"
    assert _safe_name("***") == "page" and _safe_name("ok_1.x") == "ok_1.x"


@pytest.mark.parametrize(
    "url,kept",
    [
        ("http://127.0.0.1:8000/api", True),
        ("http://localhost/x", True),
        ("data:text/plain,hi", True),
        ("blob:http://127.0.0.1/1", True),
        ("about:blank", True),
        ("https://example.com/track.js", False),
        ("http://127.0.0.2/", False),
        ("http://127.0.0.1.example.com/", False),
    ],
)
def test_only_loopback_requests_go_out(url: str, kept: bool) -> None:
    done: list[str] = []
    route = SimpleNamespace(
        request=SimpleNamespace(url=url),
        continue_=lambda: done.append("continue"),
        abort=lambda: done.append("abort"),
    )
    _local_only(route)
    assert done == (["continue"] if kept else ["abort"])


class Page:
    def __init__(self) -> None:
        self.handlers: dict[str, Any] = {}
        self.calls: list[tuple[str, Any]] = []

    def on(self, event: str, handler: Any) -> None:
        self.handlers[event] = handler

    def click(self, selector: str) -> None:
        self.calls.append(("click", selector))

    def fill(self, selector: str, value: str) -> None:
        self.calls.append(("fill", (selector, value)))

    def wait_for_load_state(self, state: str, timeout: float) -> None:
        self.calls.append(("settle", (state, timeout)))

    def inner_text(self, selector: str) -> str:
        return f"text of {selector}"

    def screenshot(self, path: str, full_page: bool) -> None:
        Path(path).write_bytes(b"png")


def test_a_journey_collects_errors_and_settles_after_a_click(tmp_path: Path) -> None:
    page = Page()
    journey = Journey(page, tmp_path / "evidence", timeout=30.0)
    page.handlers["console"](SimpleNamespace(type="error", text="boom"))
    page.handlers["console"](SimpleNamespace(type="log", text="fine"))
    page.handlers["pageerror"](ValueError("bad"))
    assert journey.console_errors == ["boom", "uncaught: bad"]
    journey.click("#sync")
    journey.fill("#q", "acme")
    assert page.calls == [
        ("click", "#sync"), ("settle", ("networkidle", 5000.0)), ("fill", ("#q", "acme")),
    ]  # fmt: skip
    assert journey.text() == "text of body"
    shot = journey.screenshot("after sync")
    assert shot == tmp_path / "evidence" / "after-sync.png" and shot.read_bytes() == b"png"
    Journey(page, tmp_path, timeout=2.0).settle()
    assert page.calls[-1] == ("settle", ("networkidle", 2000.0))
