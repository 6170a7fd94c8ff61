"""The console in a real browser: the pages to look at, their rendered rows, the
approve click, and the console while the vendor is down."""

from __future__ import annotations

from typing import Any

from harness.appkit.browser import Journey, browser_session
from harness.appkit.procs import AppProcess

from .app_calls import _json
from .bounds import CONSOLE_PAGE
from .evidence import Evidence
from .vendor_model import MARKUP_NAMES


def _console_pages(ds: Any) -> list[int]:
    """Console pages to look at: 1, the first with an amount above 2**53, every page with
    a markup name, and the last (summer time: after the DST change)."""
    order = [p.id for p in ds.api_order()]
    by_id = ds.by_id
    want = [1]
    first_big = next(i for i, pid in enumerate(order) if by_id[pid].amount_minor > 2**53)
    marked = [i for i, pid in enumerate(order) if by_id[pid].counterparty in MARKUP_NAMES]
    for index in (first_big, *marked):
        page = index // CONSOLE_PAGE + 1
        if page not in want:
            want.append(page)
    last = -(-len(order) // CONSOLE_PAGE)
    if last not in want:
        want.append(last)
    return want


def _look(j: Journey, url: str, name: str) -> dict[str, Any]:
    """Open ``url``; rendered rows (text, visibility), or the load error (the app's)."""
    from playwright.sync_api import Error as PlaywrightError

    try:
        j.goto(url)
    except PlaywrightError as exc:
        return {"status": None, "ctype": None, "rows": [], "error": str(exc).splitlines()[0]}
    out: dict[str, Any] = {"status": j.status, "ctype": j.content_type, "rows": j.rows()}
    out["shot"] = str(j.screenshot(name))
    return out


def _approve_click(j: Journey, draft: str, token: str, expect: str) -> dict[str, Any]:
    """Type the token, click the draft's approve button, wait for ``expect`` (a JS test)."""
    from playwright.sync_api import Error as PlaywrightError

    out: dict[str, Any] = {}
    sel = f'button.approve[data-draft="{draft}"]'
    out["button"] = j.wait_for(sel)
    if not out["button"]:
        return out
    try:
        j.fill("#token", token)
        j.page.click(sel, timeout=5000)
    except PlaywrightError as exc:  # e.g. covered by an overlay: the user cannot click it
        out["click_error"] = str(exc).splitlines()[0]
        return out
    try:
        j.page.wait_for_function(expect, timeout=8000)
        out["shown"] = True
    except PlaywrightError:
        out["shown"] = False
    return out


def _browse(ev: Evidence, app: AppProcess) -> None:
    """Console pages (rendered truth) and the approve journey for draft A."""
    checker = ev.dataset.tokens["checkers"][0]
    with browser_session(ev.evidence_dir, timeout=10.0) as j:
        for page in _console_pages(ev.dataset):
            ev.console[f"page{page}"] = _look(j, app.url(f"/?page={page}"), f"console-{page}")
        ev.console["errors"] = list(j.console_errors)
        if ev.draft_a is None:
            return
        if _look(j, app.url("/"), "before-approve").get("error"):
            return
        done = f"""() => {{ const r = document.querySelector('tr[data-id="{ev.draft_a}"]');
            return !!r && /\\bexecuted\\b/i.test(r.innerText); }}"""
        ev.approve_click = _approve_click(j, ev.draft_a, checker, done)
        ev.approve_click["shot"] = str(j.screenshot("approve-click"))
        ev.approve_click["api"] = _json(app, f"/api/drafts/{ev.draft_a}")


def _browse_down(ev: Evidence, app: AppProcess) -> None:
    """The console while the vendor is down: banner, rows, an approval's error."""
    checker = ev.dataset.tokens["checkers"][0]
    with browser_session(ev.evidence_dir, timeout=8.0) as j:
        look = _look(j, app.url("/"), "vendor-down")
        if look.get("error"):
            ev.down_console = look
            return
        banner = j.page.query_selector("#vendor-down")
        look["banner"] = bool(banner) and banner.is_visible()
        look["banner_text"] = banner.inner_text() if banner else ""
        if ev.draft_c is not None:
            shown = """() => { const e = document.getElementById('error');
                return !!e && e.checkVisibility() && e.innerText.trim().length > 0; }"""
            click = _approve_click(j, ev.draft_c, checker, shown)
            look["error_shown"] = bool(click.get("shown"))
            look["click"] = {k: v for k, v in click.items() if k != "shown"}
            err = j.page.query_selector("#error")
            look["error_text"] = err.inner_text() if err else ""
            look["error_shot"] = str(j.screenshot("vendor-down-approve"))
        ev.down_console = look
