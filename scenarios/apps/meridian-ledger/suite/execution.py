"""The scripted execution: ``context()`` runs the app once against the seeded vendor
and fills the evidence step by step (``_run``); where a restart may resume."""

from __future__ import annotations

import contextlib
import json
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from harness.appkit.browser import BrowserUnavailable
from harness.appkit.fetch import Called as Call
from harness.appkit.fetch import get, poll
from harness.appkit.jail import Jail
from harness.appkit.procs import AppNotHealthy, AppProcess
from harness.scoring.era import load_thresholds

from .app_calls import _json, _load, _sync_state, _synced, _walk, call
from .bounds import BAD_DRAFTS, BAD_QUERIES, DRAFT_A, DRAFT_B, DRAFT_C, DRAFT_D
from .browse import _browse, _browse_down
from .evidence import Evidence
from .grader import HERE
from .health import HEALTH_PROMPT_S, HealthWatch, first_health
from .vendor import Vendor
from .vendor_model import PAGES


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
    return (last, last + 1) if last + 1 < PAGES else (last,)


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
        expected = [p.id for p in truth_order if test(p, ds.truth[p.id][0])]  # type: ignore[no-untyped-call]  # the filters' lambdas
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
        with Vendor(seed, evidence_dir / "trace.jsonl") as vendor:
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
