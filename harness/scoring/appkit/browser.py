"""Look at a page in a real headless browser (playwright driving Debian's chromium).

The probe reports what a user would see: only *visible* ``tbody tr`` rows count (rows
hidden by CSS have no client rects), the rendered text, console errors and uncaught page
errors, plus a screenshot saved as evidence. Requests to anything but 127.0.0.1 are
aborted. Without chromium or playwright, ``BrowserUnavailable`` is raised; a suite turns
it into ``unavailable`` rows (the harness could not measure), never into the app's zero.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

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
_ROWS_JS = """() => Array.from(document.querySelectorAll('tbody tr'))
  .filter(r => r.getClientRects().length)
  .map(r => ({id: r.getAttribute('data-id'),
              cells: Array.from(r.querySelectorAll('td')).map(c => c.innerText.trim())}))"""
_ALL_ROWS_JS = "() => document.querySelectorAll('tbody tr').length"


class BrowserUnavailable(InfraError):
    """The browser could not run here (no chromium, no playwright, failed launch)."""


@dataclass(frozen=True)
class PageProbe:
    """What the browser saw at ``url``."""

    url: str
    status: int | None
    visible_rows: int
    total_rows: int
    rows: list[dict[str, Any]] = field(default_factory=list)  # visible: {"id", "cells"}
    text: str = ""
    console_errors: list[str] = field(default_factory=list)
    screenshot: Path | None = None
    error: str | None = None  # the page did not load (the app's failure)


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-") or "page"


def probe_page(
    url: str,
    evidence_dir: Path,
    *,
    name: str = "page",
    timeout: float = 15.0,
    executable: Path = CHROMIUM,
) -> PageProbe:
    """Open ``url``, wait for the network to settle, and report visible rows and errors."""
    if not Path(executable).exists():
        raise BrowserUnavailable(f"no browser at {executable}", fix="apt-get install -y chromium")
    try:
        from playwright.sync_api import Error as PlaywrightError
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        raise BrowserUnavailable(
            "playwright is not installed", fix="pip install 'harness[browser]'"
        ) from exc
    evidence_dir.mkdir(parents=True, exist_ok=True)
    shot = evidence_dir / f"{_safe_name(name)}.png"
    errors: list[str] = []
    with sync_playwright() as pw:
        try:
            browser = pw.chromium.launch(executable_path=str(executable), args=LAUNCH_ARGS)
        except PlaywrightError as exc:
            raise BrowserUnavailable(
                f"chromium did not start: {exc}".splitlines()[0],
                fix="check that chromium starts headless",
            ) from exc
        try:
            page = browser.new_page()
            page.set_default_timeout(timeout * 1000)
            page.route("**/*", _local_only)
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(f"uncaught: {e}"))
            try:
                response = page.goto(url, wait_until="load")
            except PlaywrightError as exc:  # the app's failure: nothing to see
                return PageProbe(
                    url=url,
                    status=None,
                    visible_rows=0,
                    total_rows=0,
                    console_errors=errors,
                    error=str(exc).splitlines()[0],
                )
            with contextlib.suppress(PlaywrightError):  # a polling page is still measurable
                page.wait_for_load_state("networkidle", timeout=timeout * 1000)
            rows = page.evaluate(_ROWS_JS)
            total = int(page.evaluate(_ALL_ROWS_JS))
            text = page.inner_text("body")
            page.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()
    return PageProbe(
        url=url,
        status=response.status if response else None,
        visible_rows=len(rows),
        total_rows=total,
        rows=list(rows),
        text=text,
        console_errors=errors,
        screenshot=shot,
    )


def _local_only(route: Any) -> None:
    """Abort any request that would leave 127.0.0.1."""
    host = urlsplit(route.request.url).hostname
    if route.request.url.startswith(("data:", "blob:", "about:")) or host in _LOCAL:
        route.continue_()
    else:
        route.abort()
