"""Look at a page in a real headless browser (playwright driving Debian's chromium).

Rendered truth: values come from the page *after its scripts ran* (the visible text of
each cell, ``innerText``), never from the server's HTML, so a server-rendered and a
client-rendered page that show the same thing score the same. A cell's value counts as
shown only when it is entirely visible: not hidden, not clipped (overflow, ellipsis),
not covered (fixed or sticky elements, overlays, even click-through ones), reachable by
scrolling; a row is visible when all its cells are (``appkit.rendered``).

``Journey`` drives a page step by step (navigate, click, fill, wait for a state) for
click-through checks; ``probe_page`` is the one-shot look most suites need. Requests to
anything but 127.0.0.1 are aborted. Without chromium or playwright, or when the browser
does not start, ``BrowserUnavailable`` (an infrastructure error) is raised: the scorer
turns it into outcome ``error``, never into the app's zero or a renormalised success.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from harness.appkit.rendered import DEFAULT_ROWS, rendered_rows
from harness.config.settings import env_value
from harness.errors import InfraError

CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
_LOCAL = {"127.0.0.1", "localhost"}


class BrowserUnavailable(InfraError):
    """The browser could not run here (no chromium, no playwright, failed launch)."""


def chromium_path() -> Path:
    """The browser binary (``HARNESS_CHROMIUM``, set in the scorer image, overrides)."""
    return Path(env_value("CHROMIUM") or CHROMIUM)


@dataclass(frozen=True)
class PageProbe:
    """What the browser saw at ``url``.

    ``rows`` has every ``tbody tr`` as ``{"id", "cells", "shown", "why", "visible"}``
    (``appkit.rendered``); ``visible_rows`` counts the ones a user can entirely see.
    """

    url: str
    status: int | None
    visible_rows: int
    total_rows: int
    rows: list[dict[str, Any]] = field(default_factory=list)
    text: str = ""
    console_errors: list[str] = field(default_factory=list)
    screenshot: Path | None = None
    error: str | None = None  # the page did not load (the app's failure)
    content_type: str | None = None

    @property
    def visible(self) -> list[dict[str, Any]]:
        return [r for r in self.rows if r.get("visible")]


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-") or "page"


class Journey:
    """A page being driven: each step waits for its effect, errors are collected."""

    def __init__(self, page: Any, evidence_dir: Path, timeout: float) -> None:
        self.page = page
        self.evidence_dir = evidence_dir
        self.timeout = timeout
        self.console_errors: list[str] = []
        self.status: int | None = None
        self.content_type: str | None = None
        page.on(
            "console", lambda m: self.console_errors.append(m.text) if m.type == "error" else None
        )
        page.on("pageerror", lambda e: self.console_errors.append(f"uncaught: {e}"))

    def goto(self, url: str) -> None:
        """Navigate and wait until the page's scripts had their chance (load, network idle)."""
        from playwright.sync_api import Error as PlaywrightError

        response = self.page.goto(url, wait_until="load")
        self.status = response.status if response else None
        self.content_type = response.headers.get("content-type") if response else None
        with contextlib.suppress(PlaywrightError):  # a polling page is still measurable
            self.page.wait_for_load_state("networkidle", timeout=min(self.timeout, 5.0) * 1000)

    def click(self, selector: str) -> None:
        self.page.click(selector)
        self.settle()

    def fill(self, selector: str, value: str) -> None:
        self.page.fill(selector, value)

    def wait_for(self, selector: str | None = None, *, js: str | None = None) -> bool:
        """Wait for a visible element or a JS predicate; False when it never came."""
        from playwright.sync_api import Error as PlaywrightError

        try:
            if selector:
                self.page.wait_for_selector(selector, state="visible")
            if js:
                self.page.wait_for_function(js)
        except PlaywrightError:
            return False
        return True

    def settle(self) -> None:
        from playwright.sync_api import Error as PlaywrightError

        with contextlib.suppress(PlaywrightError):
            self.page.wait_for_load_state("networkidle", timeout=min(self.timeout, 5.0) * 1000)

    def rows(self, selector: str = DEFAULT_ROWS) -> list[dict[str, Any]]:
        """Every row of ``selector`` with its rendered cell text and, per cell, whether it
        is entirely shown (``appkit.rendered``: not clipped, not covered, reachable)."""
        return rendered_rows(self.page, selector)

    def text(self) -> str:
        return str(self.page.inner_text("body"))

    def screenshot(self, name: str) -> Path:
        self.evidence_dir.mkdir(parents=True, exist_ok=True)
        shot = self.evidence_dir / f"{_safe_name(name)}.png"
        self.page.screenshot(path=str(shot), full_page=True)
        return shot


@contextlib.contextmanager
def browser_session(
    evidence_dir: Path, *, timeout: float = 15.0, executable: Path | None = None
) -> Iterator[Journey]:
    """A fresh headless browser and page; yields a ``Journey``. Raises BrowserUnavailable."""
    executable = Path(executable or chromium_path())
    if not executable.exists():
        raise BrowserUnavailable(f"no browser at {executable}", fix="apt-get install -y chromium")
    try:
        from playwright.sync_api import Error as PlaywrightError
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        raise BrowserUnavailable(
            "playwright is not installed", fix="pip install 'harness[browser]'"
        ) from exc
    with sync_playwright() as pw:
        try:
            browser = pw.chromium.launch(executable_path=str(executable), args=LAUNCH_ARGS)
        except PlaywrightError as exc:
            raise BrowserUnavailable(
                f"chromium did not start: {exc}".splitlines()[0],
                fix="check that chromium starts headless",
            ) from exc
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.set_default_timeout(timeout * 1000)
            page.route("**/*", _local_only)
            yield Journey(page, Path(evidence_dir), timeout)
        finally:
            browser.close()


def probe_page(
    url: str,
    evidence_dir: Path,
    *,
    name: str = "page",
    timeout: float = 15.0,
    executable: Path | None = None,
    wait_for: str | None = None,
) -> PageProbe:
    """Open ``url``, let its scripts run, and report rendered rows, visibility and errors."""
    from playwright.sync_api import Error as PlaywrightError

    with browser_session(evidence_dir, timeout=timeout, executable=executable) as j:
        try:
            j.goto(url)
        except PlaywrightError as exc:  # the app's failure: nothing to see
            return PageProbe(
                url, None, 0, 0, console_errors=j.console_errors, error=str(exc).splitlines()[0]
            )
        if wait_for:
            j.wait_for(wait_for)
        rows = j.rows()
        text = j.text()
        shot = j.screenshot(name)
        errors = list(j.console_errors)
    return PageProbe(
        url=url,
        status=j.status,
        visible_rows=sum(1 for r in rows if r["visible"]),
        total_rows=len(rows),
        rows=rows,
        text=text,
        console_errors=errors,
        screenshot=shot,
        content_type=j.content_type,
    )


def _local_only(route: Any) -> None:
    """Abort any request that would leave 127.0.0.1."""
    host = urlsplit(route.request.url).hostname
    if route.request.url.startswith(("data:", "blob:", "about:")) or host in _LOCAL:
        route.continue_()
    else:
        route.abort()
