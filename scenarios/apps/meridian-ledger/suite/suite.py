"""Scorer of apps/meridian-ledger: execute the built ledger against the seeded vendor.

``context()`` runs the scenario once and collects evidence; the checks only read it.
The app runs confined (``appkit.jail``). The run: start the vendor mock (``vendor.py``)
and the app; while the app waits on the held page, ask /health, then SIGKILL it; respawn
it and let it finish (dropped connection, 429 + Retry-After, 500, slow page, webhooks
racing the pages); read the API (listing, pagination, filters, summary, bad input, a
small load); ask for a second sync (conditional requests); create drafts, approve one
in a real browser and one through the API while the vendor holds its answer, SIGKILL in
between and respawn; look at the console (rendered text, occlusion); then SIGKILL again,
take the vendor offline, respawn, and read what survived, the banner and the error an
approval gets. Time-aware checks grade the vendor's trace timestamps.

Every SPEC MUST id is verified by a check (``musts=``); success means all are met and no
critical fired (the graded score only ranks). See the scenario's README.
"""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import json
import signal
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.scoring import Outcome, Suite, absent, fraction, graded, unavailable
from harness.appkit import grading
from harness.appkit.browser import BrowserUnavailable, Journey, browser_session
from harness.appkit.fetch import Called as Call
from harness.appkit.fetch import Fetched, get, poll
from harness.appkit.fetch import call as fetch_call
from harness.appkit.jail import Jail
from harness.appkit.procs import AppNotHealthy, AppProcess
from harness.scoring.era import load_thresholds

HERE = Path(__file__).resolve().parent


def _load_vendor() -> Any:
    name = f"meridian_vendor_{abs(hash(str(HERE)))}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, HERE / "vendor.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


V = _load_vendor()
PAGES, PAGE_SIZE = V.PAGES, V.PAGE_SIZE
CONSOLE_PAGE = 100
#: every page once, the failed attempts (a drop, a 429, five 500s) and the killed request
OPTIMAL_WALK = PAGES + 2 + V.ERROR_REPEATS + 1
BACKOFF_MIN_S = 0.2  # SPEC 3.1 rule 2: at least 0.2 s before the first retry
BACKOFF_FACTOR = 1.5  # ... each further pause at least 1.5 times the previous one
BACKOFF_CAP_S = 2.0  # ... capped at no less than 2 s
MIN_ATTEMPTS = 6
LOAD_REQUESTS = 40
LATENCY_OK_S, LATENCY_ZERO_S = 1.0, 3.0
BAD_QUERIES = (
    "currency=GBP",
    "currency=eur",
    "status=paid",
    "day=2026-02-30",
    "day=29.03.2026",
    "per_page=0",
    "per_page=501",
    "page=0",
    "page=abc",
)
BAD_DRAFTS: tuple[Any, ...] = (
    {"amount_minor": 12.5, "currency": "EUR", "counterparty": "Acme"},
    {"amount_minor": "1000", "currency": "EUR", "counterparty": "Acme"},
    {"amount_minor": -5, "currency": "EUR", "counterparty": "Acme"},
    {"amount_minor": 0, "currency": "USD", "counterparty": "Acme"},
    {"amount_minor": 100, "currency": "GBP", "counterparty": "Acme"},
    {"amount_minor": 100, "currency": "JPY", "counterparty": ""},
    {"amount_minor": 100, "currency": "JPY", "counterparty": "x" * 81},
    {"amount_minor": True, "currency": "KWD", "counterparty": "Acme"},
    {"amount_minor": 10**18 + 1, "currency": "USD", "counterparty": "Acme"},
    {"amount_minor": 100, "currency": "EUR", "counterparty": "    "},
    [1, 2, 3],
    "not json",
)
#: valid drafts at the SPEC's bounds: counterparty trimmed (80 characters after it), 10**18
DRAFT_A = {"amount_minor": 4_200_123, "currency": "KWD", "counterparty": "  Quay <i>Hold</i> BV "}
DRAFT_B = {"amount_minor": 987_654_321, "currency": "JPY", "counterparty": "Kiosk Oy"}
DRAFT_C = {"amount_minor": 1_005, "currency": "EUR", "counterparty": "Late & Co"}
DRAFT_D = {
    "amount_minor": 10**18,
    "currency": "KWD",
    "counterparty": "  " + "Abc & Co " * 8 + "Quay BV! ",
}
README_NEEDS = (
    "python -m ledgerd",
    "--port",
    "--db-dir",
    "--vendor",
    "--tokens-file",
    "/api/payments",
    "/api/summary",
    "/api/drafts",
    "/webhooks/vendor",
)

suite = Suite(
    name="meridian-ledger",
    version="2.1.2",
    tier_weights={
        "boot": 0.08,
        "wire": 0.17,
        "sync": 0.12,
        "validation": 0.08,
        "journeys": 0.10,
        "rendered": 0.10,
        "performance": 0.07,
        "consistency": 0.14,
        "resilience": 0.14,
    },
    excellence_weight=0.05,
    critical_floor=0.6,
    class_floors={"dead": 0.0},
    thresholds=HERE / "thresholds.yml",
    thresholds_pin="43db4eef358b82d9eb7bd01eab41b19c0ed5e33a7691cecba2c798ebbaac2b76",
    spec=HERE.parent / "SPEC.md",
)


@dataclass
class Evidence:
    """Everything one execution of the app produced, for the checks to grade."""

    dataset: Any
    evidence_dir: Path
    readme: str = ""
    confinement: str = ""
    healthy: bool = False
    health_detail: str = ""
    first_health: Fetched | None = None
    first_health_after_hold: bool = False  # the boot ask fell in the page hold: asked again
    health_during_sync: Fetched | None = None
    health_stalls: list[str] = field(default_factory=list)
    killed_mid_sync: bool = False
    resume_from: tuple[int, ...] = ()  # the pages a correct restart may continue from
    respawn_error: str | None = None
    status: Any = None
    listing: list[dict[str, Any]] | None = None
    listing_text: str = ""
    listing_detail: str = ""
    paged: list[dict[str, Any]] | None = None
    paged_total: Any = None
    filters: dict[str, tuple[list[str] | None, list[str]]] = field(default_factory=dict)
    summary: Any = None
    bad_queries: dict[str, int | None] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    resync: Call | None = None
    second_post: Call | None = None
    during_hold: Fetched | None = None
    resync_status: Any = None
    draft_calls: dict[str, Call] = field(default_factory=dict)
    drafts_after_bad: Any = None
    draft_a: str | None = None
    draft_b: str | None = None
    draft_c: str | None = None
    draft_d: str | None = None
    drafts_before_down: list[str] = field(default_factory=list)
    drafts_restored: Any = None
    approve_c_api: Call | None = None
    console: dict[str, Any] = field(default_factory=dict)
    console_html: str = ""
    approve_click: dict[str, Any] = field(default_factory=dict)
    approve_a_again: Call | None = None
    held_create: bool = False
    approval_kill_error: str | None = None
    draft_b_after: Any = None
    down_error: str | None = None
    down_boot_s: float | None = None
    down_status: Any = None
    restored: list[dict[str, Any]] | None = None
    down_console: dict[str, Any] = field(default_factory=dict)
    draft_c_after: Any = None
    probe_error: str | None = None
    sqlite_files: list[str] = field(default_factory=list)
    trace: list[dict[str, Any]] = field(default_factory=list)
    creations: list[dict[str, Any]] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)

    def pages(self, *phases: str) -> list[dict[str, Any]]:
        return [r for r in self.trace if r.get("kind") == "page" and r["phase"] in phases]

    def page_requests(self, page: int) -> list[dict[str, Any]]:
        return [r for r in self.pages("initial-sync", "after-respawn") if r.get("page") == page]


# -- driving the app ---------------------------------------------------------------------


def call(url: str, method: str = "GET", body: Any = None, token: str | None = None) -> Call:
    """One scripted request to the app and its answer (10 s at most)."""
    return fetch_call(url, method, body, token, timeout=10.0)


def _json(app: AppProcess, path: str) -> Any:
    return get(app.url(path), timeout=10.0).json()


def _walk(app: AppProcess, query: str, per_page: int) -> tuple[list[dict[str, Any]] | None, Any]:
    """All items of /api/payments?query, page by page; None when it is not the SPEC's shape."""
    items: list[dict[str, Any]] = []
    total = None
    for page in range(1, 4000 // per_page + 3):
        sep = "&" if query else ""
        got = get(app.url(f"/api/payments?{query}{sep}per_page={per_page}&page={page}"))
        data = got.json()
        if not got.ok or not isinstance(data, dict) or not isinstance(data.get("items"), list):
            return (items or None), total
        total = data.get("total")
        items.extend(i for i in data["items"] if isinstance(i, dict))
        if not data["items"] or (isinstance(total, int) and len(items) >= total):
            break
    return items, total


def _sync_state(app: AppProcess) -> Any:
    state = _json(app, "/api/status")
    return state if isinstance(state, dict) else None


def _synced(app: AppProcess) -> bool:
    state = _sync_state(app)
    return bool(state) and state.get("sync") in ("done", "failed")


def _console_pages(ds: Any) -> list[int]:
    """Console pages to look at: 1, the first with an amount above 2**53, every page with
    a markup name, and the last (summer time: after the DST change)."""
    order = [p.id for p in ds.api_order()]
    by_id = ds.by_id
    want = [1]
    first_big = next(i for i, pid in enumerate(order) if by_id[pid].amount_minor > 2**53)
    marked = [i for i, pid in enumerate(order) if by_id[pid].counterparty in V.MARKUP_NAMES]
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


def _load(app: AppProcess) -> list[float]:
    paths = [f"/api/payments?per_page=100&page={1 + i % 15}" for i in range(LOAD_REQUESTS // 2)]
    paths += ["/api/summary"] * (LOAD_REQUESTS - len(paths))
    out: list[float] = []
    lock = threading.Lock()

    def worker(chunk: list[str]) -> None:
        for path in chunk:
            start = time.monotonic()
            got = get(app.url(path), timeout=10.0)
            took = time.monotonic() - start if got.ok else 10.0
            with lock:
                out.append(took)

    threads = [threading.Thread(target=worker, args=(paths[i::4],)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sorted(out)


HEALTH_PROMPT_S = 3.0  # "promptly" (M-HEALTH-1): an answer within this many seconds


def first_health(app: AppProcess, vendor: Any) -> tuple[Fetched, bool]:
    """The ask ``boot.health`` (M-RUN-1) grades, made once the app is healthy, and
    whether it fell in the vendor's page hold: an ask that got no answer while the vendor
    held a page is the health watch's finding (M-HEALTH-1), not a boot failure, so the
    suite asks again after the respawn and grades that answer instead. (A fast app can
    reach the held page before this ask; a /health that waits on the vendor then hangs
    here, and boot.health would charge M-RUN-1 for it on some machines and not others.)"""
    got = get(app.url("/health"), timeout=HEALTH_PROMPT_S)
    return got, got.status is None and vendor.kill_point.is_set()


class HealthWatch:
    """Asks ``GET /health`` over and over while the vendor holds its page (M-HEALTH-1).

    The held page may be asked for before the app's first health answer (a fast app on
    an early page): its boot poll then waits on a /health that the page blocks, and the
    suite's own mid-sync ask comes only after the page was let go. This thread starts
    asking the moment the page is held, whatever the app is doing, and records every ask
    that got no answer within ``HEALTH_PROMPT_S`` while the page was held; a refused
    connection (the app not listening yet) is not counted.
    """

    def __init__(self, vendor: Any, app: AppProcess, wait: float) -> None:
        self.stalls: list[str] = []
        self._vendor, self._app, self._wait = vendor, app, wait
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="health-watch", daemon=True)

    def __enter__(self) -> HealthWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> list[str]:
        """Stop asking (before the app is killed); the stalls seen so far."""
        self._stop.set()
        return list(self.stalls)

    def _watch(self) -> None:
        vendor = self._vendor
        if not vendor.kill_point.wait(self._wait):
            return
        while not self._stop.is_set() and vendor.held_until is None:
            port = self._app.port
            if port is None:
                self._stop.wait(0.1)
                continue
            asked = time.monotonic()
            got = get(f"http://127.0.0.1:{port}/health", timeout=HEALTH_PROMPT_S)
            took = time.monotonic() - asked
            if self._stop.is_set():
                return  # the app is being killed: this ask's end is no measurement
            if not got.ok and took >= HEALTH_PROMPT_S * 0.95:
                since = asked - (vendor.held_since or asked)
                self.stalls.append(
                    f"GET /health asked {since:.1f} s into the page hold: no answer in "
                    f"{HEALTH_PROMPT_S:g} s ({got.error or got.status})"
                )
            self._stop.wait(0.25)


def _resume_from(vendor: Any) -> tuple[int, ...]:
    """Where a correct restart continues, judged at the SIGKILL.

    Normally the app dies waiting on the held page, which it must fetch first. When the
    page was let go before the kill (the app's boot poll itself waited on the hold, so
    the suite could kill only after it), the app may have stored the last page it asked
    for, or not: it continues from that page or the next.
    """
    held = vendor.dataset.faults.kill_page
    if vendor.held_until is None:
        return (held,)
    asked = [r["page"] for r in ev_pages(vendor, "initial-sync") if r.get("page") is not None]
    last = max(asked, default=held)
    return (last, last + 1) if last + 1 < V.PAGES else (last,)


def _run(ev: Evidence, vendor: Any, app: AppProcess, budgets: dict[str, float]) -> None:
    """The scripted execution; fills ``ev`` step by step and stops at the first dead end."""
    ds = ev.dataset
    maker, checker = ds.tokens["makers"][0], ds.tokens["checkers"][0]
    t0 = time.monotonic()
    with HealthWatch(vendor, app, budgets["start"] + budgets["sync"]) as watch:
        try:
            app.start()
        except AppNotHealthy as exc:
            ev.health_detail = f"{exc}; stderr: {exc.log_tail[-300:]}"
            return
        ev.healthy, ev.health_detail = True, f"GET /health answered on port {app.port}"
        ev.timings["boot_s"] = round(time.monotonic() - t0, 2)
        ev.first_health, boot_ask_held = first_health(app, vendor)
        if vendor.kill_point.wait(budgets["sync"]):
            ev.health_during_sync = get(app.url("/health"), timeout=HEALTH_PROMPT_S)
            ev.health_stalls = watch.stop()
            app.kill_group(signal.SIGKILL)
            ev.killed_mid_sync = True
            ev.resume_from = _resume_from(vendor)
    vendor.release()
    vendor.mark_phase("after-respawn")
    try:
        if ev.killed_mid_sync:
            app.respawn()
    except AppNotHealthy as exc:
        ev.respawn_error = str(exc)
        return
    if boot_ask_held and ev.killed_mid_sync:
        ev.first_health = get(app.url("/health"), timeout=HEALTH_PROMPT_S)
        ev.first_health_after_hold = True
    t1 = time.monotonic()
    if ev.killed_mid_sync:  # a second POST while the resumed sync runs: starts nothing
        ev.second_post = call(app.url("/api/sync"), "POST")
    # a sync that never reached the held page had its time already: a short last look
    poll(lambda: _synced(app), budgets["sync"] if ev.killed_mid_sync else 3.0)
    ev.timings["sync_s"] = round(time.monotonic() - t1, 2)
    ev.status = _sync_state(app)

    # -- the API ------------------------------------------------------------------------
    ev.listing, _ = _walk(app, "", 500)
    ev.listing_text = get(app.url("/api/payments?per_page=500&page=1")).text
    ev.paged, ev.paged_total = _walk(app, "", 97)
    truth_order = ds.api_order()
    dst_day = "2026-03-29"
    for name, query, test in (
        ("currency", "currency=KWD", lambda p, s: p.currency == "KWD"),
        ("status", "status=settled", lambda p, s: s == "settled"),
        ("day", f"day={dst_day}", lambda p, s: p.day == dst_day),
        ("day-late", "day=2026-04-12", lambda p, s: p.day == "2026-04-12"),
        (
            "combined",
            "currency=JPY&status=pending",
            lambda p, s: p.currency == "JPY" and s == "pending",
        ),
    ):
        got, _ = _walk(app, query, 500)
        expected = [p.id for p in truth_order if test(p, ds.truth[p.id][0])]
        ev.filters[name] = ([str(i.get("id")) for i in got] if got is not None else None, expected)
    ev.summary = _json(app, "/api/summary")
    for q in BAD_QUERIES:
        ev.bad_queries[q] = get(app.url(f"/api/payments?{q}")).status
    ev.latencies = _load(app)

    # -- a second sync: conditional requests --------------------------------------------
    vendor.mark_phase("resync")
    ev.resync = call(app.url("/api/sync"), "POST")
    if poll(lambda: len(ev_pages(vendor, "resync")) > 0, 5.0):
        poll(lambda: _synced(app), budgets["resync"])
    ev.resync_status = _sync_state(app)

    # -- drafts: validation, authorisation ----------------------------------------------
    api = app.url("/api/drafts")
    good = DRAFT_A
    ev.draft_calls["create:no-token"] = call(api, "POST", good)
    ev.draft_calls["create:checker"] = call(api, "POST", good, checker)
    for i, bad in enumerate(BAD_DRAFTS):
        ev.draft_calls[f"bad:{i}"] = call(api, "POST", bad, maker)
    ev.drafts_after_bad = _json(app, "/api/drafts")
    created = {}
    for tag, body in (
        ("a", good),
        ("b", DRAFT_B),
        ("c", DRAFT_C),
        ("d", DRAFT_D),
    ):
        answer = call(api, "POST", body, maker)
        ev.draft_calls[f"create:{tag}"] = answer
        if answer.status == 201 and isinstance(answer.body, dict) and answer.body.get("id"):
            created[tag] = str(answer.body["id"])
    ev.draft_a, ev.draft_b, ev.draft_c = created.get("a"), created.get("b"), created.get("c")
    ev.draft_d = created.get("d")
    if ev.draft_a:
        target = app.url(f"/api/drafts/{ev.draft_a}/approve")
        ev.draft_calls["approve:no-token"] = call(target, "POST")
        ev.draft_calls["approve:maker"] = call(target, "POST", None, maker)

    # -- the console and the approve journey --------------------------------------------
    t2 = time.monotonic()
    try:
        _browse(ev, app)
    except BrowserUnavailable as exc:
        ev.probe_error = str(exc)
    ev.timings["browser_s"] = round(time.monotonic() - t2, 2)
    ev.console_html = get(app.url("/")).text
    if ev.draft_a:
        ev.approve_a_again = call(
            app.url(f"/api/drafts/{ev.draft_a}/approve"), "POST", None, checker
        )

    # -- SIGKILL between the vendor call and the commit ---------------------------------
    if ev.draft_b:
        vendor.mark_phase("approval")
        vendor.hold_next_create()
        box: list[Call] = []
        target = app.url(f"/api/drafts/{ev.draft_b}/approve")
        th = threading.Thread(target=lambda: box.append(call(target, "POST", None, checker)))
        th.start()
        ev.held_create = vendor.create_point.wait(8.0)
        if ev.held_create:  # a request waiting on the vendor must not block others
            ev.during_hold = get(app.url("/api/status"), timeout=2.0)
        app.kill_group(signal.SIGKILL)
        vendor.release_create()
        th.join(12.0)
        vendor.mark_phase("after-approval-kill")
        try:
            app.respawn()
        except AppNotHealthy as exc:
            ev.approval_kill_error = str(exc)
            return

        def executed() -> bool:
            d = _json(app, f"/api/drafts/{ev.draft_b}")
            return isinstance(d, dict) and d.get("state") == "executed"

        poll(executed, budgets["approval"])
        ev.draft_b_after = _json(app, f"/api/drafts/{ev.draft_b}")

    # -- vendor down: restart, stored data, banner, the approval's error -----------------
    before = _json(app, "/api/drafts")
    if isinstance(before, dict) and isinstance(before.get("items"), list):
        ev.drafts_before_down = [str(d.get("id")) for d in before["items"] if isinstance(d, dict)]
    vendor.mark_phase("offline")
    vendor.set_offline(True)
    t3 = time.monotonic()
    try:
        app.respawn()
    except AppNotHealthy as exc:
        ev.down_error = str(exc)
        return
    ev.down_boot_s = round(time.monotonic() - t3, 2)
    poll(lambda: (_sync_state(app) or {}).get("vendor") == "down", budgets["down"])
    ev.down_status = _sync_state(app)
    ev.restored, _ = _walk(app, "", 500)
    try:
        _browse_down(ev, app)
    except BrowserUnavailable as exc:
        ev.probe_error = str(exc)
    ev.drafts_restored = _json(app, "/api/drafts")
    if ev.draft_c:
        ev.approve_c_api = call(app.url(f"/api/drafts/{ev.draft_c}/approve"), "POST", None, checker)
        ev.draft_c_after = _json(app, f"/api/drafts/{ev.draft_c}")


def ev_pages(vendor: Any, phase: str) -> list[dict[str, Any]]:
    return [r for r in vendor.records() if r.get("kind") == "page" and r["phase"] == phase]


@contextlib.contextmanager
def context(tree: Path, seed: str, evidence_dir: Path) -> Iterator[Evidence]:
    """Execute the app in ``tree`` once against the vendor seeded by ``seed``."""
    evidence_dir = Path(evidence_dir)
    evidence_dir.mkdir(parents=True, exist_ok=True)
    found = load_thresholds(HERE / "thresholds.yml")
    budgets = {
        name: found.budget(name, default)
        for name, default in (
            ("start", 10.0),
            ("sync", 20.0),
            ("resync", 15.0),
            ("approval", 10.0),
            ("down", 5.0),
        )
    }
    started = time.monotonic()
    readme = Path(tree) / "README.md"
    jail = Jail(Path(tree))
    try:
        with V.Vendor(seed, evidence_dir / "trace.jsonl") as vendor:
            tokens = jail.home / "tokens.json"
            tokens.write_text(json.dumps(vendor.dataset.tokens), encoding="utf-8")
            tokens.chmod(0o644)
            argv = [
                jail.python,
                "-m",
                "ledgerd",
                "--port",
                "{port}",
                "--db-dir",
                "{data}/db",
                "--vendor",
                vendor.url,
                "--tokens-file",
                str(tokens),
            ]
            ev = Evidence(dataset=vendor.dataset, evidence_dir=evidence_dir)
            ev.readme = readme.read_text(errors="replace") if readme.is_file() else ""
            ev.confinement = f"{jail.mode}: {jail.statement()}"
            with AppProcess(
                argv,
                cwd=Path(tree),
                logs=evidence_dir / "logs",
                budget=budgets["start"],
                name="ledgerd",
                jail=jail,
            ) as app:
                vendor.app_url = lambda: app.url() if app.port else None
                app_start = time.monotonic()
                _run(ev, vendor, app, budgets)
            ev.timings["app_run_s"] = round(time.monotonic() - app_start, 2)
            ev.trace = vendor.records()
            ev.creations = list(vendor.creations)
        db = jail.data / "db"
        files = sorted(p for p in db.rglob("*") if p.is_file()) if db.is_dir() else []
        ev.sqlite_files = [
            p.relative_to(jail.data).as_posix()
            for p in files
            if p.read_bytes()[:16] == b"SQLite format 3\x00"
        ]
    finally:
        jail.close()
    ev.timings["execution_s"] = round(time.monotonic() - started, 2)
    yield ev


# -- helpers for checks ------------------------------------------------------------------


def _ids(items: list[dict[str, Any]] | None) -> list[str]:
    return [str(i.get("id")) for i in items or []]


def _no_listing(ev: Evidence) -> Outcome:
    if ev.respawn_error:
        return absent(f"no restart after SIGKILL: {ev.respawn_error}")
    return absent("GET /api/payments gave no {items: [...]} listing")


def _strict(good: int, total: int, detail: str) -> Outcome:
    """A fraction where any miss halves the grade (one wrong number is wrong data)."""
    if total <= 0:
        return absent(f"nothing to compare: {detail}")
    score = 1.0 if good == total else 0.5 * good / total
    return graded(score, f"{good}/{total}: {detail}")


def _payment_rows(ev: Evidence) -> tuple[list[dict[str, Any]] | None, Outcome | None]:
    if ev.probe_error:
        return None, unavailable(f"no browser: {ev.probe_error}")
    if not ev.console:
        return None, absent("the console was not looked at (earlier failure)")
    rows = [
        r
        for key, look in ev.console.items()
        if key.startswith("page")
        for r in look["rows"]
        if str(r.get("id")) in ev.dataset.by_id
    ]
    return rows, None


def _drafts_truth(ev: Evidence) -> dict[str, dict[str, Any]]:
    """What each created draft must show: id -> the body it was created with, trimmed."""
    out = {}
    bodies = {"a": DRAFT_A, "b": DRAFT_B, "c": DRAFT_C, "d": DRAFT_D}
    for tag in "abcd":
        got = ev.draft_calls.get(f"create:{tag}")
        ident = getattr(ev, f"draft_{tag}")
        if ident and got is not None and isinstance(got.body, dict):
            body = {**got.body, **bodies.get(tag, {})}
            body["counterparty"] = str(body.get("counterparty", "")).strip()
            out[ident] = body
    return out


def _draft_rows(ev: Evidence) -> list[dict[str, Any]]:
    want = _drafts_truth(ev)
    return [r for r in ev.console.get("page1", {}).get("rows", []) if r.get("id") in want]


#: latency one measured pause may carry when the next is compared with it; a loaded
#: machine (load 20 on 2 cores) adds up to about half a second to one request
STEP_ALLOWANCE_S = 0.5


def _growth_failures(pauses: list[float]) -> list[str]:
    """The SPEC's least schedule (0.2 s growing 1.5x, capped at 2 s) as a lower bound no
    right client can miss however loaded the machine, and each pause against the
    previous one less ``STEP_ALLOWANCE_S`` (a pause that does not grow at all fails)."""
    bad = []
    for k, got in enumerate(pauses):
        least = min(BACKOFF_CAP_S, BACKOFF_MIN_S * BACKOFF_FACTOR**k) - grading.TIMER_SLACK_S
        step = min(BACKOFF_CAP_S, BACKOFF_FACTOR * (pauses[k - 1] - STEP_ALLOWANCE_S)) if k else 0
        if got < least:
            bad.append(f"pause {k + 1} {got:.3f} s < {least:.3f} s")
        elif got < step:
            bad.append(f"pause {k + 1} {got:.3f} s not {BACKOFF_FACTOR}x pause {k}")
    return bad


def _gaps(asks: list[dict[str, Any]]) -> list[float]:
    out, prev = [], None
    for r in asks:
        if prev is not None:
            out.append((r["t_ms"] - prev["t_ms"]) / 1000.0)
        if r["status"] == 200:
            break
        prev = r
    return out


# -- A: boot and deliverables ------------------------------------------------------------


@suite.check(
    "app.boots",
    critical=True,
    severity="dead",
    harm="dead service: it never answers, so nothing is synced, shown or paid",
)
def app_boots(ev: Evidence) -> Outcome:
    return graded(1.0, ev.health_detail) if ev.healthy else absent(ev.health_detail)


@suite.check(
    "app.confinement",
    tier="diagnostic",
    harm="untrusted evidence: an unconfined app could fake its score",
)
def app_confinement(ev: Evidence) -> Outcome:
    return graded(0.0 if ev.confinement.startswith("none") else 1.0, ev.confinement)


@suite.check(
    "run.timing",
    tier="diagnostic",
    harm="slow grading: scoring time beyond the app's own run time is overhead",
)
def run_timing(ev: Evidence) -> Outcome:
    t = ev.timings
    return graded(
        1.0,
        f"execution {t.get('execution_s')} s, of which the app ran {t.get('app_run_s')} s "
        f"(boot {t.get('boot_s')} s, sync {t.get('sync_s')} s, browser {t.get('browser_s')} s)",
    )


@suite.check(
    "boot.health",
    musts=("M-RUN-1",),
    tier="boot",
    root="app.boots",
    harm='unmonitorable: /health does not answer {"status": "ok"}',
)
def boot_health(ev: Evidence) -> Outcome:
    got = ev.first_health
    ok = got is not None and got.status == 200 and got.json() == {"status": "ok"}
    again = " (asked again after the respawn: the first ask fell in the page hold)"
    return graded(
        1.0 if ok else 0.0,
        f"GET /health: {got.status if got else None} {got.text[:60] if got else ''}"
        + (again if ev.first_health_after_hold else ""),
    )


@suite.check(
    "boot.sqlite",
    musts=("M-DATA-1",),
    tier="boot",
    root="app.boots",
    harm="state outside SQLite under --db-dir: durability cannot be relied on",
)
def boot_sqlite(ev: Evidence) -> Outcome:
    return graded(
        1.0 if ev.sqlite_files else 0.0, f"SQLite files under --db-dir: {ev.sqlite_files[:3]}"
    )


@suite.check(
    "boot.status",
    musts=("M-STATUS-1",),
    tier="boot",
    root="app.boots",
    harm="blind operators: /api/status does not report the sync",
)
def boot_status(ev: Evidence) -> Outcome:
    st = ev.status
    if not isinstance(st, dict):
        return absent("GET /api/status gave no JSON object")
    keys = ("sync", "pages_done", "payments", "vendor")
    have = [k for k in keys if k in st]
    return fraction(len(have), len(keys), f"status fields present: {have}")


# -- B: wire behaviour (from the vendor's trace) ------------------------------------------


@suite.check(
    "wire.auth",
    musts=("M-WIRE-1",),
    tier="wire",
    root="app.boots",
    harm="rejected calls: vendor requests without the API key",
)
def wire_auth(ev: Evidence) -> Outcome:
    reqs = [r for r in ev.trace if r.get("kind") in ("page", "create") and r["phase"] != "offline"]
    if not reqs:
        return absent("the vendor was never called")
    return fraction(
        sum(bool(r.get("auth")) for r in reqs), len(reqs), "vendor requests with the Bearer key"
    )


@suite.check(
    "wire.sequential",
    musts=("M-WIRE-2",),
    tier="wire",
    root="app.boots",
    harm="overloaded vendor: pages requested in parallel or out of order",
)
def wire_sequential(ev: Evidence) -> Outcome:
    reqs = [
        r for r in ev.pages("initial-sync", "after-respawn", "resync") if r.get("page") is not None
    ]
    if not reqs:
        return absent("the vendor was never asked for a page")
    bad = []
    for phase in ("initial-sync", "after-respawn", "resync"):
        last = -1
        for r in (r for r in reqs if r["phase"] == phase):
            if r["inflight"] or r["page"] < last:
                bad.append(r["seq"])
            last = max(last, r["page"])
    return fraction(len(reqs) - len(bad), len(reqs), f"one at a time, in order; bad {bad[:3]}")


def _retried(ev: Evidence, page: int, minimum: float, what: str) -> Outcome:
    asks = ev.page_requests(page)
    gaps = _gaps(asks)
    if not gaps:
        return graded(0.0, f"page {page} ({what}) was never retried")
    fetched = any(r["status"] == 200 for r in asks)
    ok = fetched and grading.first_pause_ok(gaps, minimum)
    return graded(
        1.0 if ok else 0.0,
        f"page {page} ({what}): retried after {gaps[0]:.3f} s (need >= {minimum:g}), "
        f"fetched {fetched}",
    )


@suite.check(
    "wire.dropped",
    musts=("M-WIRE-3",),
    tier="wire",
    root="app.boots",
    harm="lost page: a dropped connection ends the sync or is retried in a tight loop",
)
def wire_dropped(ev: Evidence) -> Outcome:
    return _retried(ev, ev.dataset.faults.drop_page, BACKOFF_MIN_S, "dropped connection")


@suite.check(
    "wire.backoff",
    tier="wire",
    root="app.boots",
    harm="retry storm: a 500 is retried at once",
    musts=("M-WIRE-3",),
)
def wire_backoff(ev: Evidence) -> Outcome:
    return _retried(ev, ev.dataset.faults.error_page, BACKOFF_MIN_S, "HTTP 500")


@suite.check(
    "wire.backoff_growth",
    tier="wire",
    root="app.boots",
    musts=("M-WIRE-4",),
    harm="retry storm: repeated 500s retried with a constant or slowly growing pause",
)
def wire_backoff_growth(ev: Evidence) -> Outcome:
    page = ev.dataset.faults.error_page
    pauses = _gaps(ev.page_requests(page))
    if len(pauses) < 2:
        return graded(0.0, f"page {page}: {len(pauses) + 1} attempts, no growth to measure")
    bad = _growth_failures(pauses)
    shown = ", ".join(f"{g:.3f}" for g in pauses)
    return graded(0.0 if bad else 1.0, f"page {page} pauses [{shown}] s; {bad[:2]}")


@suite.check(
    "wire.attempts",
    tier="wire",
    root="app.boots",
    musts=("M-WIRE-5",),
    harm="lost sync: the client gives up on a page before the SPEC's six attempts",
)
def wire_attempts(ev: Evidence) -> Outcome:
    page = ev.dataset.faults.error_page
    asks = ev.page_requests(page)
    fetched = next((n for n, r in enumerate(asks, 1) if r["status"] == 200), None)
    ok = fetched is not None and fetched >= MIN_ATTEMPTS
    return graded(
        1.0 if ok else 0.0,
        f"page {page}: {V.ERROR_REPEATS} 500s in a row; fetched at attempt {fetched} "
        f"of {len(asks)}",
    )


@suite.check(
    "wire.retry_after",
    musts=("M-WIRE-6",),
    tier="wire",
    root="app.boots",
    harm="ignored Retry-After: the client retries before the vendor allowed it",
)
def wire_retry_after(ev: Evidence) -> Outcome:
    return _retried(ev, ev.dataset.faults.rate_page, float(V.RETRY_AFTER), "429")


@suite.check(
    "wire.slow",
    musts=("M-WIRE-7",),
    tier="wire",
    root="app.boots",
    harm="fatal timeout: a slow vendor page is abandoned or re-requested",
)
def wire_slow(ev: Evidence) -> Outcome:
    page = ev.dataset.faults.slow_page
    asks = ev.page_requests(page)
    slow = next((r for r in asks if r["fault"] == "slow"), None)
    if slow is None:
        return absent(f"the slow page {page} was never requested")
    # the slow answer does arrive: a right client never asks for that page again
    early = [r["seq"] for r in asks if r["seq"] > slow["seq"]]
    later = [r for r in ev.pages("initial-sync", "after-respawn") if r["seq"] > slow["seq"]]
    went_on = any(r.get("page") == page + 1 for r in later)
    ok = not early and went_on
    return graded(
        1.0 if ok else 0.0, f"slow page {page}: re-asked early {early}, continued {went_on}"
    )


@suite.check(
    "wire.etag",
    musts=("M-WIRE-8",),
    tier="wire",
    root="app.boots",
    harm="wasted transfer: a second sync re-downloads pages the vendor says are unchanged",
)
def wire_etag(ev: Evidence) -> Outcome:
    reqs = ev.pages("resync")
    if not reqs:
        return absent("no page was requested after POST /api/sync")
    served: dict[int, str] = {}
    for r in ev.pages("initial-sync", "after-respawn"):
        if r["status"] == 200 and r.get("page") is not None:
            served[r["page"]] = r["etag"]
    good = sum(1 for r in reqs if r.get("inm") and r["inm"] == served.get(r.get("page", -1)))
    unchanged = sum(1 for r in reqs if r["status"] == 304)
    return fraction(
        good,
        max(PAGES, len(reqs)),
        f"conditional requests with the last ETag ({unchanged} answered 304)",
    )


@suite.check(
    "wire.idempotency",
    musts=("M-ONCE-1",),
    tier="wire",
    root="app.boots",
    harm="double payment risk: creations without an Idempotency-Key, or a new key on retry",
)
def wire_idempotency(ev: Evidence) -> Outcome:
    creates = [c for c in ev.creations if c.get("status") != 503]
    if not creates:
        return absent("the vendor never received a payment creation")
    keyed = sum(1 for c in creates if c.get("key"))
    keys: dict[str, set[str]] = {}
    for c in creates:
        keys.setdefault(str(c.get("reference")), set()).add(str(c.get("key")))
    reused = sum(1 for k in keys.values() if len(k) == 1)
    return grading.strict(
        keyed + reused,
        len(creates) + len(keys),
        f"keyed {keyed}/{len(creates)}; one key per draft {reused}/{len(keys)}",
    )


@suite.check(
    "wire.key_per_draft",
    tier="wire",
    root="app.boots",
    musts=("M-ONCE-2",),
    harm="wrong payment: two drafts share an Idempotency-Key, so the second gets the first's",
)
def wire_key_per_draft(ev: Evidence) -> Outcome:
    creates = [c for c in ev.creations if c.get("status") != 503 and c.get("key")]
    if not creates:
        return absent("the vendor never received a keyed payment creation")
    drafts: dict[str, set[str]] = {}
    for c in creates:
        drafts.setdefault(str(c["key"]), set()).add(str(c.get("reference")))
    shared = {k[:12]: sorted(v) for k, v in drafts.items() if len(v) > 1}
    api = ev.approve_click.get("api")
    a: dict[str, Any] = api if isinstance(api, dict) else {}
    b: dict[str, Any] = ev.draft_b_after if isinstance(ev.draft_b_after, dict) else {}
    ids = [d.get("vendor_payment_id") for d in (a, b) if d.get("vendor_payment_id")]
    same = len(ids) != len(set(ids))
    return graded(
        0.0 if shared or same else 1.0,
        f"{len(drafts)} keys; shared by drafts {shared}; A and B the same payment {same}",
    )


# -- C: sync discipline ------------------------------------------------------------------


@suite.check(
    "sync.complete",
    musts=("M-SYNC-1",),
    tier="sync",
    root="app.boots",
    harm="missing payments: the copy silently lacks part of the vendor's data",
)
def sync_complete(ev: Evidence) -> Outcome:
    if ev.listing is None:
        return _no_listing(ev)
    have = set(_ids(ev.listing))
    want = [p.id for p in ev.dataset.payments]
    return fraction(sum(i in have for i in want), len(want), "vendor payments stored")


@suite.check(
    "sync.no_duplicates",
    musts=("M-SYNC-1",),
    tier="sync",
    root="app.boots",
    harm="double counting: a payment listed twice",
)
def sync_no_duplicates(ev: Evidence) -> Outcome:
    if ev.listing is None:
        return _no_listing(ev)
    ids = _ids(ev.listing)
    dupes = sorted(i for i, n in Counter(ids).items() if n > 1)
    return graded(1.0 if not dupes else 0.5 * len(set(ids)) / len(ids), f"duplicated: {dupes[:3]}")


@suite.check(
    "sync.resumes",
    musts=("M-SYNC-3",),
    tier="sync",
    root="app.boots",
    harm="wasteful restart: a crash makes the service fetch completed pages again",
)
def sync_resumes(ev: Evidence) -> Outcome:
    kill = ev.dataset.faults.kill_page
    if not ev.killed_mid_sync:
        return graded(0.0, f"the sync never reached page {kill}, where it is killed")
    resume = ev.resume_from or (kill,)
    after = [r for r in ev.pages("after-respawn") if r["status"] == 200]
    if not any(r.get("page") in resume for r in after):
        pages = " or ".join(str(p) for p in resume)
        return graded(0.0, f"after the restart page {pages} was never fetched")
    kill = min(resume)
    again = {r["page"] for r in after if r.get("page") is not None and r["page"] < kill}
    return grading.strict(
        kill - len(again), kill, f"pages stored before SIGKILL not fetched again ({sorted(again)})"
    )


@suite.check(
    "sync.single",
    tier="sync",
    root="app.boots",
    musts=("M-SYNC-2",),
    harm="doubled walks: a POST /api/sync during a sync starts a second one beside it",
)
def sync_single(ev: Evidence) -> Outcome:
    got = ev.second_post
    if got is None:
        return graded(0.0, "the sync never reached the held page, so no second POST was made")
    # a second walk fetches fault-free pages a second time (a retry of a fault does not)
    fetched = Counter(
        r["page"]
        for r in ev.pages("after-respawn")
        if r["status"] in (200, 304) and r["page"] is not None and r.get("fault") is None
    )
    twice = sorted(p for p, n in fetched.items() if n > 1)
    ok = got.status == 202 and not twice
    return graded(
        1.0 if ok else 0.0,
        f"POST /api/sync while syncing: {got.status}; pages fetched twice after it {twice[:4]}",
    )


@suite.check(
    "sync.status",
    musts=("M-STATUS-1",),
    tier="sync",
    root="app.boots",
    harm="stuck status: operators are never told the sync finished",
)
def sync_status(ev: Evidence) -> Outcome:
    st = ev.status
    if not isinstance(st, dict):
        return absent("GET /api/status gave no JSON object")
    n = len(set(_ids(ev.listing)))
    ok = st.get("sync") == "done" and st.get("payments") == n == len(ev.dataset.payments)
    ok = ok and st.get("pages_done") == PAGES
    return graded(1.0 if ok else 0.0, f"status {json.dumps(st)[:160]} with {n} stored")


@suite.check(
    "sync.on_request",
    musts=("M-SYNC-4",),
    tier="sync",
    root="app.boots",
    harm="no refresh: POST /api/sync does not walk the collection again",
)
def sync_on_request(ev: Evidence) -> Outcome:
    got = ev.resync
    if got is None:
        return absent("POST /api/sync was not reached")
    pages = {r.get("page") for r in ev.pages("resync") if r["status"] in (200, 304)}
    accepted = got.status == 202
    done = isinstance(ev.resync_status, dict) and ev.resync_status.get("sync") == "done"
    return fraction(
        len(pages) + accepted + done,
        PAGES + 2,
        f"POST /api/sync {got.status}; pages walked {len(pages)}; done {done}",
    )


# -- D: validation and docs --------------------------------------------------------------


@suite.check(
    "val.query",
    musts=("M-API-1",),
    tier="validation",
    root="app.boots",
    harm="silent garbage: invalid filters or paging are not rejected with 400",
)
def val_query(ev: Evidence) -> Outcome:
    if not ev.bad_queries:
        return absent("the API was not reached")
    bad = [q for q, s in ev.bad_queries.items() if s != 400]
    n = len(ev.bad_queries)
    # a query answered with data it did not ask for is a wrong answer: all or nothing
    return graded(0.0 if bad else 1.0, f"{n - len(bad)}/{n} answered 400; not 400: {bad[:4]}")


@suite.check(
    "val.drafts",
    musts=("M-DRAFT-1",),
    tier="validation",
    root="app.boots",
    harm="bad payments: invalid drafts are accepted (float, string, negative, unknown currency)",
)
def val_drafts(ev: Evidence) -> Outcome:
    calls = {k: v for k, v in ev.draft_calls.items() if k.startswith("bad:")}
    if not calls:
        return absent("POST /api/drafts was not reached")
    ok = [k for k, v in calls.items() if v.status == 400]
    items = ev.drafts_after_bad.get("items") if isinstance(ev.drafts_after_bad, dict) else None
    clean = isinstance(items, list) and len(items) == 0
    wrong = [f"{k}->{v.status}" for k, v in calls.items() if v.status != 400]
    # valid at the bounds: trimmed to 80 characters, 10**18; stored trimmed
    bounds = []
    for tag, body in (("a", DRAFT_A), ("d", DRAFT_D)):
        got = ev.draft_calls.get(f"create:{tag}")
        have = got.body if got is not None and isinstance(got.body, dict) else {}
        if (
            got is None
            or got.status != 201
            or have.get("counterparty") != str(body["counterparty"]).strip()
        ):
            bounds.append(
                f"{tag}: {got.status if got else None} {str(have.get('counterparty'))[:20]!r}"
            )
    # one accepted invalid draft is a payment that should not exist: all or nothing
    good = len(ok) + clean == len(calls) + 1 and not bounds
    return graded(
        1.0 if good else 0.0,
        f"{len(ok)}/{len(calls)} rejected with 400; none stored {clean}; wrong {wrong[:3]}; "
        f"valid at the bounds refused or untrimmed {bounds}",
    )


@suite.check(
    "val.auth",
    musts=("M-AUTH-1",),
    tier="validation",
    root="app.boots",
    harm="broken four-eyes rule: drafts created or approved without the right token",
)
def val_auth(ev: Evidence) -> Outcome:
    want = {
        "create:no-token": 401,
        "create:checker": 403,
        "approve:no-token": 401,
        "approve:maker": 403,
    }
    got = {k: ev.draft_calls[k].status for k in want if k in ev.draft_calls}
    if not got:
        return absent("the drafts API was not reached")
    ok = [k for k, s in got.items() if s == want[k]]
    return grading.strict(len(ok), len(want), f"answers {got}")


@suite.check(
    "val.webhook_signature",
    musts=("M-HOOK-1",),
    tier="validation",
    root="app.boots",
    harm="forged events: webhooks with a bad signature are accepted or applied",
)
def val_webhook_signature(ev: Evidence) -> Outcome:
    forged = [r for r in ev.trace if r.get("kind") == "webhook" and not r["signed"]]
    if not forged:
        return graded(0.0, "no forged webhook was delivered (the sync did not get that far)")
    by_id = {str(i.get("id")): i for i in ev.listing or []}
    good = 0
    for r in forged:
        item = by_id.get(r["payment"])
        applied = item is not None and item.get("version") == r["version"]
        good += int(r["app_status"] == 401) + int(item is not None and not applied)
    return grading.strict(good, 2 * len(forged), "forged events answered 401 and not applied")


@suite.check(
    "val.webhook_window",
    tier="validation",
    root="app.boots",
    musts=("M-HOOK-2",),
    harm="replayed events: a captured webhook replayed later (or dated ahead) is applied",
)
def val_webhook_window(ev: Evidence) -> Outcome:
    sent = [r for r in ev.trace if r.get("kind") == "webhook" and r.get("offset")]
    if not sent:
        return graded(0.0, "no webhook around the window was delivered (the sync stopped early)")
    by_id = {str(i.get("id")): i for i in ev.listing or []}
    bad = []
    for r in sent:
        inside = abs(int(r["offset"])) <= V.WINDOW_S
        item = by_id.get(r["payment"])
        applied = item is not None and item.get("version") == r["version"]
        want = (200, True) if inside else (401, False)
        if (r["app_status"], applied) != want:
            bad.append(f"{r['offset']:+d} s: {r['app_status']}, applied {applied}")
    return graded(0.0 if bad else 1.0, f"{len(sent)} events at -290/-310/+310 s; wrong {bad}")


@suite.check(
    "docs.readme",
    musts=("M-DOCS-1",),
    tier="validation",
    root="app.boots",
    harm="undocumented service: README.md does not say how to run it or what it serves",
)
def docs_readme(ev: Evidence) -> Outcome:
    have = [n for n in README_NEEDS if n in ev.readme]
    missing = [n for n in README_NEEDS if n not in ev.readme]
    return fraction(len(have), len(README_NEEDS), f"README.md mentions; missing {missing}")


# -- J: journeys (a real browser) --------------------------------------------------------


@suite.check(
    "journey.approve_click",
    musts=("M-UI-5",),
    tier="journeys",
    root="app.boots",
    harm="dead button: a checker cannot approve a draft from the console",
)
def journey_approve_click(ev: Evidence) -> Outcome:
    if ev.probe_error:
        return unavailable(f"no browser: {ev.probe_error}")
    if ev.draft_a is None:
        return absent("no draft could be created to approve")
    a = ev.approve_click
    api: dict[str, Any] = a["api"] if isinstance(a.get("api"), dict) else {}
    steps = {
        "button present": bool(a.get("button")),
        "page shows executed": bool(a.get("shown")),
        "API says executed": api.get("state") == "executed" and bool(api.get("vendor_payment_id")),
    }
    ok = [k for k, v in steps.items() if v]
    return fraction(len(ok), len(steps), f"steps {steps}", a.get("shot"))


@suite.check(
    "journey.down_error",
    musts=("M-UI-2",),
    tier="journeys",
    root="app.boots",
    harm="silent failure: an approval while the vendor is down shows no error",
)
def journey_down_error(ev: Evidence) -> Outcome:
    if ev.probe_error:
        return unavailable(f"no browser: {ev.probe_error}")
    look = ev.down_console
    if not look:
        return absent(f"the vendor-down console was not reached ({ev.down_error})")
    after = ev.draft_c_after if isinstance(ev.draft_c_after, dict) else {}
    steps = {
        "error visible": bool(look.get("error_shown"))
        and bool(str(look.get("error_text", "")).strip()),
        "draft not executed": bool(after) and after.get("state") != "executed",
    }
    ok = [k for k, v in steps.items() if v]
    return fraction(
        len(ok),
        len(steps),
        f"steps {steps}; error {str(look.get('error_text'))[:80]!r}",
        look.get("error_shot"),
    )


# -- V: rendered truth -------------------------------------------------------------------


@suite.check(
    "money.exponent",
    musts=("M-MONEY-1",),
    critical=True,
    severity="money",
    root="app.boots",
    harm="wrong money: an amount shown with the wrong exponent or digits (JPY 0, KWD 3, 2**53+)",
)
def money_exponent(ev: Evidence) -> Outcome:
    rows, why = _payment_rows(ev)
    if rows is None:
        return why  # type: ignore[return-value]
    by_id = ev.dataset.by_id
    mine = [r for r in rows if len(r["cells"]) >= 5]
    totals = [
        r
        for look in ev.console.values()
        if isinstance(look, dict)
        for r in look.get("rows", [])
        if str(r.get("id", "")).startswith("total-")
    ][:4]
    if not mine:
        return absent("no payment rows with 5 cells on the console")
    # an amount counts only when its cell is entirely shown (not clipped, not covered)
    bad = [r for r in mine if r["cells"][4] != by_id[r["id"]].amount or not _shown(r, 4)]
    want = _total_amounts(ev)
    bad_totals = [
        r
        for r in totals
        if len(r["cells"]) < 3 or r["cells"][2] != want.get(r["id"][6:]) or not _shown(r, 2)
    ]
    drafts = _drafts_truth(ev)
    draft_rows = _draft_rows(ev)
    bad_drafts = [
        r
        for r in draft_rows
        if len(r["cells"]) < 4
        or r["cells"][3] != _draft_amount(drafts[r["id"]])
        or not _shown(r, 3)
    ]
    n = len(mine) + len(totals) + len(drafts)
    sample = [
        f"{by_id[r['id']].currency} {r['cells'][4]}!={by_id[r['id']].amount}" for r in bad[:2]
    ]
    sample += [f"{r['id']} {r['cells'][2:3]}!={want.get(r['id'][6:])}" for r in bad_totals[:2]]
    sample += [f"{r['id']} {r['cells'][3:4]}" for r in bad_drafts[:2]]
    good = n - len(bad) - len(bad_totals) - len(drafts) + len(draft_rows) - len(bad_drafts)
    return grading.strict(
        good, n, f"amounts right on the console (payments, totals, drafts); wrong {sample}"
    )


def _shown(row: dict[str, Any], cell: int) -> bool:
    shown = row.get("shown") or []
    return cell < len(shown) and bool(shown[cell])


def _draft_amount(draft: dict[str, Any]) -> str:
    return str(V.format_minor(int(draft["amount_minor"]), V.EXPONENTS[draft["currency"]]))


def _total_amounts(ev: Evidence) -> dict[str, str]:
    sums: dict[str, int] = {}
    for p in ev.dataset.payments:
        sums[p.currency] = sums.get(p.currency, 0) + p.amount_minor
    return {c: V.format_minor(s, V.EXPONENTS[c]) for c, s in sums.items()}


@suite.check(
    "console.data_visible",
    musts=("M-UI-9",),
    critical=True,
    severity="view",
    root="app.boots",
    harm="empty console: stored payments are not visible to the user (absent, hidden or covered)",
)
def console_data_visible(ev: Evidence) -> Outcome:
    rows, why = _payment_rows(ev)
    if rows is None:
        return why  # type: ignore[return-value]
    want = [p.id for p in ev.dataset.api_order()][:CONSOLE_PAGE]
    page1 = {r["id"] for r in ev.console.get("page1", {}).get("rows", [])}
    missing = [i for i in want if i not in page1]
    every = [
        r
        for key, look in ev.console.items()
        if key.startswith("page")
        for r in look.get("rows", [])
    ]
    hidden = [
        f"{r['id']} ({','.join(w for w in r.get('why', []) if w)})"
        for r in every
        if not r.get("visible")
    ]
    # one row hidden, clipped or covered is data a user cannot read: all or nothing
    return graded(
        0.0 if missing or hidden else 1.0,
        f"{len(every)} rows on {len(ev.console) - 1} pages; page 1 lacks {len(missing)}; "
        f"not entirely visible {hidden[:3]}",
        ev.console.get("page1", {}).get("shot"),
    )


@suite.check(
    "ui.order",
    musts=("M-UI-6",),
    tier="rendered",
    root="app.boots",
    harm="misleading console: rows not in the SPEC's order",
)
def ui_order(ev: Evidence) -> Outcome:
    rows, why = _payment_rows(ev)
    if rows is None:
        return why  # type: ignore[return-value]
    order = [p.id for p in ev.dataset.api_order()]
    good = total = 0
    for key, look in ev.console.items():
        if not key.startswith("page"):
            continue
        page = int(key[4:])
        want = order[(page - 1) * CONSOLE_PAGE : page * CONSOLE_PAGE]
        got = [r["id"] for r in look["rows"] if str(r.get("id")) in ev.dataset.by_id]
        total += len(want)
        good += sum(1 for i, pid in enumerate(want) if i < len(got) and got[i] == pid)
    return grading.strict(good, total, "console rows at their SPEC position")


@suite.check(
    "ui.escaped",
    musts=("M-UI-7",),
    tier="rendered",
    root="app.boots",
    harm="markup injection: counterparty names are interpreted as HTML",
)
def ui_escaped(ev: Evidence) -> Outcome:
    rows, why = _payment_rows(ev)
    if rows is None:
        return why  # type: ignore[return-value]
    by_id = ev.dataset.by_id
    marked = [r for r in rows if by_id[r["id"]].counterparty in V.MARKUP_NAMES]
    if len(marked) < len(V.MARKUP_NAMES):
        return graded(0.0, f"{len(marked)} of {len(V.MARKUP_NAMES)} markup names on the console")
    ok = [
        r for r in marked if len(r["cells"]) >= 3 and r["cells"][2] == by_id[r["id"]].counterparty
    ]
    drafts = _drafts_truth(ev)
    draft_ok = [
        r
        for r in _draft_rows(ev)
        if len(r["cells"]) >= 2 and r["cells"][1] == drafts[r["id"]]["counterparty"]
    ]
    # one name rendered as markup is an injection: all or nothing
    return grading.strict(
        len(ok) + len(draft_ok),
        len(marked) + len(drafts),
        f"{len(ok)}/{len(marked)} markup names literal in payments, "
        f"{len(draft_ok)}/{len(drafts)} drafts' counterparties literal",
    )


@suite.check(
    "ui.drafts",
    tier="rendered",
    root="app.boots",
    musts=("M-UI-4",),
    harm="blind checker: the drafts table lacks a draft or shows it without its cells",
)
def ui_drafts(ev: Evidence) -> Outcome:
    if ev.probe_error:
        return unavailable(f"no browser: {ev.probe_error}")
    drafts = _drafts_truth(ev)
    if not drafts:
        return graded(0.0, "no draft could be created")
    rows = {r["id"]: r for r in _draft_rows(ev)}

    def ok(ident: str) -> bool:
        cells = rows[ident]["cells"] if ident in rows else []
        return (
            len(cells) == 6
            and cells[0] == ident
            and cells[2] == drafts[ident]["currency"]
            and cells[4] == "pending_approval"
        )

    return grading.each(
        list(drafts), ok, "drafts rows: id, counterparty, currency, amount, state, action", str
    )


@suite.check(
    "ui.berlin_time",
    musts=("M-TIME-1",),
    tier="rendered",
    root="app.boots",
    harm="wrong times: creation shown in UTC or a fixed offset, not Berlin local time",
)
def ui_berlin_time(ev: Evidence) -> Outcome:
    rows, why = _payment_rows(ev)
    if rows is None:
        return why  # type: ignore[return-value]
    by_id = ev.dataset.by_id
    mine = [r for r in rows if len(r["cells"]) >= 2]
    if not mine:
        return absent("no payment rows on the console")
    ok = [r for r in mine if r["cells"][1] == V.berlin_minute(by_id[r["id"]].created_at)]
    return grading.strict(len(ok), len(mine), "created cells in Berlin local time")


@suite.check(
    "ui.totals",
    musts=("M-UI-3",),
    tier="rendered",
    root="app.boots",
    harm="wrong totals: the console's per-currency counts disagree with the ledger",
)
def ui_totals(ev: Evidence) -> Outcome:
    if ev.probe_error:
        return unavailable(f"no browser: {ev.probe_error}")
    rows = [
        r
        for r in ev.console.get("page1", {}).get("rows", [])
        if str(r.get("id", "")).startswith("total-")
    ]
    counts = Counter(p.currency for p in ev.dataset.payments)
    ok = [
        r
        for r in rows
        if len(r["cells"]) >= 2
        and r["cells"][0] == r["id"][6:]
        and r["cells"][1] == str(counts.get(r["id"][6:]))
    ]
    return grading.strict(
        len(ok), len(counts), f"totals rows with the right currency and count ({len(rows)} rows)"
    )


@suite.check(
    "ui.down_banner",
    musts=("M-UI-1",),
    tier="rendered",
    root="app.boots",
    harm="hidden outage: no visible vendor-down state, or it covers the data",
)
def ui_down_banner(ev: Evidence) -> Outcome:
    if ev.probe_error:
        return unavailable(f"no browser: {ev.probe_error}")
    look = ev.down_console
    if not look:
        return absent(f"the vendor-down console was not reached ({ev.down_error})")
    rows = [r for r in look.get("rows", []) if str(r.get("id")) in ev.dataset.by_id]
    visible = sum(1 for r in rows if r.get("visible"))
    text = str(look.get("banner_text", "")).lower()
    steps = {
        "banner visible": bool(look.get("banner")) and "unavailable" in text,
        "rows still visible": bool(rows) and visible == len(rows),
    }
    ok = [k for k, v in steps.items() if v]
    return fraction(
        len(ok), len(steps), f"{steps}; {visible}/{len(rows)} rows on top", look.get("shot")
    )


@suite.check(
    "ui.console_clean",
    musts=("M-UI-8",),
    tier="rendered",
    root="app.boots",
    harm="broken page: script errors or a wrong Content-Type",
)
def ui_console_clean(ev: Evidence) -> Outcome:
    if ev.probe_error:
        return unavailable(f"no browser: {ev.probe_error}")
    look = ev.console.get("page1")
    if not look:
        return absent("the console was not reached")
    ctype = str(look.get("ctype") or "").replace(" ", "").lower()
    errors = ev.console.get("errors", [])
    ok = int(ctype == "text/html;charset=utf-8") + int(not errors)
    return fraction(ok, 2, f"Content-Type {ctype!r}; console errors {errors[:2]}")


# -- P: performance ----------------------------------------------------------------------


@suite.check(
    "perf.requests",
    musts=("M-EFF-1",),
    tier="performance",
    root="app.boots",
    harm="wasted vendor quota: more requests than the optimal walk",
)
def perf_requests(ev: Evidence) -> Outcome:
    reqs = ev.pages("initial-sync", "after-respawn")
    if not reqs:
        return absent("the vendor was never asked for a page")
    n = len(reqs)
    # the SPEC's own count: a request per page plus one per failed attempt, nothing else
    return graded(
        1.0 if n <= OPTIMAL_WALK else 0.0,
        f"{n} page requests for the first sync (the SPEC's count {OPTIMAL_WALK})",
    )


@suite.check(
    "perf.latency",
    tier="performance",
    root="app.boots",
    harm="slow API: listing and summary requests are slow under a small load",
)
def perf_latency(ev: Evidence) -> Outcome:
    lat = ev.latencies
    if not lat:
        return absent("the API was not reached")
    p95 = lat[min(len(lat) - 1, int(0.95 * len(lat)))]
    score = (
        1.0
        if p95 <= LATENCY_OK_S
        else max(0.0, (LATENCY_ZERO_S - p95) / (LATENCY_ZERO_S - LATENCY_OK_S))
    )
    return graded(round(score, 1), f"p95 {p95 * 1000:.0f} ms over {len(lat)} requests, 4 at a time")


# -- X: consistency ----------------------------------------------------------------------


@suite.check(
    "conservation.zero",
    musts=("M-SUM-1",),
    critical=True,
    severity="money",
    root="app.boots",
    harm="money created or lost: per-currency counts and totals differ from the vendor's",
)
def conservation_zero(ev: Evidence) -> Outcome:
    got = ev.summary.get("currencies") if isinstance(ev.summary, dict) else None
    if not isinstance(got, dict):
        return absent("GET /api/summary gave no currencies object")
    counts: Counter[str] = Counter()
    sums: dict[str, int] = {}
    for p in ev.dataset.payments:
        counts[p.currency] += 1
        sums[p.currency] = sums.get(p.currency, 0) + p.amount_minor
    good, wrong = 0, []
    for c in counts:
        have: dict[str, Any] = got[c] if isinstance(got.get(c), dict) else {}
        for key, want in (("count", counts[c]), ("amount_minor", sums[c])):
            if type(have.get(key)) is int and have.get(key) == want:
                good += 1
            else:
                wrong.append(f"{c}.{key} {have.get(key)} != {want}")
    return _strict(good, 2 * len(counts), f"residual zero; wrong {wrong[:2]}")


@suite.check(
    "days.dst",
    musts=("M-DAY-1",),
    critical=True,
    severity="data",
    root="app.boots",
    harm="wrong day buckets: counts per Berlin day wrong (UTC or a fixed offset across DST)",
)
def days_dst(ev: Evidence) -> Outcome:
    got = ev.summary.get("days") if isinstance(ev.summary, dict) else None
    if not isinstance(got, dict):
        return absent("GET /api/summary gave no days object")
    want = Counter(p.day for p in ev.dataset.payments)
    keys = set(want) | set(got)
    bad = sorted(k for k in keys if got.get(k) != want.get(k))
    return _strict(
        len(keys) - len(bad), len(keys), f"Berlin days with the right count; wrong {bad[:3]}"
    )


@suite.check(
    "cons.versions",
    musts=("M-HOOK-3",),
    tier="consistency",
    root="app.boots",
    harm="stale status: a racing or late webhook leaves a payment in an old state",
)
def cons_versions(ev: Evidence) -> Outcome:
    if ev.listing is None:
        return _no_listing(ev)
    touched = {e.payment_id for e in ev.dataset.events if e.valid}
    by_id = {str(i.get("id")): i for i in ev.listing}
    ok = [
        pid
        for pid in touched
        if pid in by_id
        and (by_id[pid].get("status"), by_id[pid].get("version")) == ev.dataset.truth[pid]
    ]
    return grading.strict(
        len(ok), len(touched), "payments changed by webhooks in the vendor's final state"
    )


@suite.check(
    "api.order",
    musts=("M-API-2",),
    tier="consistency",
    root="app.boots",
    harm="unstable order: listings not ordered by creation time then id",
)
def api_order(ev: Evidence) -> Outcome:
    if ev.listing is None:
        return _no_listing(ev)
    want = {p.id: (p.created_at, p.id) for p in ev.dataset.payments}
    keys = [want.get(i, ("", i)) for i in _ids(ev.listing)]
    pairs = len(keys) - 1
    good = sum(1 for a, b in itertools.pairwise(keys) if a < b)
    return _strict(good, pairs, "adjacent items in (created_at, id) order")


@suite.check(
    "api.pagination",
    musts=("M-API-2",),
    tier="consistency",
    root="app.boots",
    harm="skipped or repeated items when a client pages through the API",
)
def api_pagination(ev: Evidence) -> Outcome:
    if ev.listing is None or ev.paged is None:
        return _no_listing(ev)
    a, b = _ids(ev.listing), _ids(ev.paged)
    good = sum(1 for i, x in enumerate(a) if i < len(b) and b[i] == x)
    total_ok = ev.paged_total == len(a)
    return _strict(
        good + total_ok,
        max(len(a), len(b)) + 1,
        f"pages of 97 match pages of 500; total {ev.paged_total}",
    )


@suite.check(
    "api.filters",
    musts=("M-API-3",),
    tier="consistency",
    root="app.boots",
    harm="wrong answers: filtered listings include or miss payments",
)
def api_filters(ev: Evidence) -> Outcome:
    if not ev.filters:
        return absent("the API was not reached")
    ok = [k for k, (got, want) in ev.filters.items() if got == want]
    wrong = {k: (len(got or []), len(want)) for k, (got, want) in ev.filters.items() if got != want}
    return fraction(len(ok), len(ev.filters), f"filters exact; wrong (got, want): {wrong}")


@suite.check(
    "api.amounts",
    musts=("M-API-4",),
    tier="consistency",
    root="app.boots",
    harm="corrupted amounts in the API: minor units or decimal strings wrong",
)
def api_amounts(ev: Evidence) -> Outcome:
    if ev.listing is None:
        return _no_listing(ev)
    by_id = ev.dataset.by_id
    mine = [i for i in ev.listing if str(i.get("id")) in by_id]
    ok = [
        i
        for i in mine
        if type(i.get("amount_minor")) is int
        and i["amount_minor"] == by_id[i["id"]].amount_minor
        and i.get("amount") == by_id[i["id"]].amount
        and i.get("currency") == by_id[i["id"]].currency
        and i.get("day") == by_id[i["id"]].day
    ]
    return _strict(len(ok), len(mine), "items with exact amount_minor, amount, currency and day")


# -- R: resilience -----------------------------------------------------------------------


@suite.check(
    "durability.kill",
    musts=("M-DUR-1",),
    critical=True,
    severity="data",
    root="app.boots",
    harm="lost data: payments or drafts stored before a SIGKILL are gone after the restart",
)
def durability_kill(ev: Evidence) -> Outcome:
    before = set(_ids(ev.listing))
    if not before:
        return absent("nothing was stored to survive the SIGKILL")
    if ev.down_error:
        return graded(0.0, f"no restart after SIGKILL: {ev.down_error}")
    after = set(_ids(ev.restored))
    items = ev.drafts_restored.get("items") if isinstance(ev.drafts_restored, dict) else None
    drafts = {str(d.get("id")) for d in items or [] if isinstance(d, dict)}
    lost = [d for d in ev.drafts_before_down if d not in drafts]
    return grading.strict(
        len(before & after) + len(ev.drafts_before_down) - len(lost),
        len(before) + len(ev.drafts_before_down),
        f"payments and drafts served after SIGKILL with the vendor offline; drafts lost {lost}",
    )


@suite.check(
    "payment.once",
    musts=("M-ONCE-1",),
    critical=True,
    severity="money",
    root="app.boots",
    harm="double payment: one approved draft became two vendor payments",
)
def payment_once(ev: Evidence) -> Outcome:
    drafts = [d for d in (ev.draft_a, ev.draft_b) if d]
    if not drafts:
        return absent("no draft was approved")
    made: dict[str, set[str]] = {}
    for c in ev.creations:
        if c.get("status") in (200, 201) and c.get("payment"):
            made.setdefault(str(c.get("reference")), set()).add(str(c["payment"]))
    ok = [d for d in drafts if len(made.get(d, set())) <= 1]
    c_ok = ev.draft_c is None or not made.get(ev.draft_c)
    return grading.strict(
        len(ok) + c_ok,
        len(drafts) + 1,
        f"vendor payments per draft { ({k: len(v) for k, v in made.items()}) }",
    )


@suite.check(
    "approval.completes",
    musts=("M-ONCE-3",),
    critical=True,
    severity="flow",
    root="app.boots",
    harm="stuck approval: a draft approved when the service crashed never completes",
)
def approval_completes(ev: Evidence) -> Outcome:
    if ev.draft_b is None:
        return absent("no draft could be created")
    if not ev.held_create:
        return graded(0.0, "the approval never reached the vendor")
    if ev.approval_kill_error:
        return graded(0.0, f"no restart: {ev.approval_kill_error}")
    d = ev.draft_b_after if isinstance(ev.draft_b_after, dict) else {}
    made = {
        str(c["payment"])
        for c in ev.creations
        if c.get("reference") == ev.draft_b and c.get("payment")
    }
    ok = d.get("state") == "executed" and d.get("vendor_payment_id") in made
    return graded(1.0 if ok else 0.0, f"after SIGKILL and restart: {json.dumps(d)[:160]}")


@suite.check(
    "res.health_during_sync",
    musts=("M-HEALTH-1",),
    tier="resilience",
    root="app.boots",
    harm="blind operations: /health hangs while the sync waits on the vendor",
)
def res_health_during_sync(ev: Evidence) -> Outcome:
    if not ev.killed_mid_sync:
        return absent("the sync never reached the held page")
    got = ev.health_during_sync
    ok = got is not None and got.status == 200 and not ev.health_stalls
    stalls = (
        f"; {len(ev.health_stalls)} unanswered: {ev.health_stalls[0]}" if ev.health_stalls else ""
    )
    detail = f"GET /health mid-sync: {got.status if got else None}{stalls}"
    return graded(1.0 if ok else 0.0, detail)


@suite.check(
    "res.down_boot",
    musts=("M-DOWN-1",),
    tier="resilience",
    root="app.boots",
    harm="outage cascade: the service cannot start or serve while the vendor is down",
)
def res_down_boot(ev: Evidence) -> Outcome:
    if ev.down_boot_s is None:
        return absent(f"no restart with the vendor offline: {ev.down_error}")
    st = ev.down_status if isinstance(ev.down_status, dict) else {}
    steps = {
        "healthy": True,
        "serves stored payments": bool(ev.restored),
        "status says vendor down": st.get("vendor") == "down",
    }
    ok = [k for k, v in steps.items() if v]
    return fraction(len(ok), len(steps), f"{steps}; boot {ev.down_boot_s} s")


@suite.check(
    "res.approval_retry",
    musts=("M-APPROVE-1",),
    tier="resilience",
    root="app.boots",
    harm="fragile approval: a repeated approve is not refused once executed",
)
def res_approval_retry(ev: Evidence) -> Outcome:
    got = ev.approve_a_again
    if got is None:
        return absent("no executed draft to approve again")
    return graded(
        1.0 if got.status == 409 else 0.0, f"second approve of an executed draft: {got.status}"
    )


@suite.check(
    "res.concurrent",
    tier="resilience",
    root="app.boots",
    musts=("M-CONC-1",),
    harm="frozen service: one request waiting on the vendor blocks every other request",
)
def res_concurrent(ev: Evidence) -> Outcome:
    if not ev.held_create:
        return graded(0.0, "the approval never reached the vendor (nothing was waiting on it)")
    got = ev.during_hold
    ok = got is not None and got.status == 200
    return graded(
        1.0 if ok else 0.0,
        f"GET /api/status while an approval waits on the vendor: {got.status if got else None} "
        f"{(got.error or '') if got else ''}"[:160],
    )


@suite.check(
    "res.approval_502",
    tier="resilience",
    root="app.boots",
    musts=("M-APPROVE-2",),
    harm="stuck draft: an approval the vendor could not take is not a 502, or stays approving",
)
def res_approval_502(ev: Evidence) -> Outcome:
    got = ev.approve_c_api
    if got is None:
        return graded(0.0, f"no approval with the vendor offline ({ev.down_error})")
    after = ev.draft_c_after if isinstance(ev.draft_c_after, dict) else {}
    ok = got.status == 502 and after.get("state") == "pending_approval"
    return graded(
        1.0 if ok else 0.0,
        f"approve with the vendor offline: {got.status}; draft then {after.get('state')!r}",
    )


# -- excellence: economy of the wire (graded continuously) -------------------------------


@suite.check(
    "exc.page_weight",
    tier="excellence",
    root="app.boots",
    harm="heavy console: bytes per payment row beyond what the table needs",
)
def exc_page_weight(ev: Evidence) -> Outcome:
    rows = [
        r
        for r in ev.console.get("page1", {}).get("rows", [])
        if str(r.get("id")) in ev.dataset.by_id
    ]
    if not ev.console_html or not rows:
        return absent("no console page with rows")
    per_row = len(ev.console_html.encode()) / len(rows)
    return graded(
        round(max(0.0, min(1.0, (600 - per_row) / 500)), 2), f"{per_row:.0f} bytes per row"
    )


@suite.check(
    "exc.api_compact",
    tier="excellence",
    root="app.boots",
    harm="heavy API: bytes per listed payment beyond the fields the SPEC asks for",
)
def exc_api_compact(ev: Evidence) -> Outcome:
    data = None
    with contextlib.suppress(ValueError):
        data = json.loads(ev.listing_text)
    items = data.get("items") if isinstance(data, dict) else None
    if not items:
        return absent("no listing")
    per_item = len(ev.listing_text.encode()) / len(items)
    return graded(
        round(max(0.0, min(1.0, (400 - per_item) / 300)), 2), f"{per_item:.0f} bytes per item"
    )
