"""The run of apps/meridian-console, step by step (see ``drive.py`` for the pieces;
``api_steps`` and ``browser_sessions`` hold its longer steps)."""

from __future__ import annotations

import threading
import time
from typing import Any

from harness.appkit.browser import BrowserUnavailable
from harness.appkit.fetch import get, poll
from harness.appkit.procs import AppNotHealthy, AppProcess

from . import drive
from .api_steps import _edits, _final, _notifier_kill, _partition, _reads_ledger, post_event
from .browser_sessions import _session_cold, _session_errors, _session_main
from .fixtures import STATUSES

#: webhooks the scorer sends before the console's journeys, so that the feed has more
#: than 50 notifications to choose the 50 most recent from
FEED_FILL = 30

#: how far above the payment's version the unsigned webhook claims (no genuine one reaches it)
UNSIGNED_BUMP = 50

#: seconds the cold boot (vendor offline) is watched from ledgerd's start, at least
COLD_WATCH_S = 6.5

#: A bearer token no user of the tokens file has (SPEC 5.6: unknown token, 401).
UNKNOWN_TOKEN = "t_not_in_the_tokens_file"


def run(
    ev: Any,
    vendor: Any,
    n2l: Any,
    l2n: Any,
    ledger: AppProcess,
    notifier: AppProcess,
    budgets: dict[str, float],
) -> None:
    ds = vendor.dataset
    maker, checker, lead = ds.user("maker"), ds.user("checker"), ds.user("lead")
    t0 = time.monotonic()
    try:
        notifier.start()
        ev.notifier_healthy, ev.notifier_detail = True, f"GET /health on port {notifier.port}"
    except AppNotHealthy as exc:
        ev.notifier_detail = f"{exc}; stderr: {exc.log_tail[-300:]}"
    ev.notifier_health = get(notifier.url("/health"), timeout=3.0) if ev.notifier_healthy else None
    t1 = time.monotonic()
    try:
        ledger.start()
    except AppNotHealthy as exc:
        ev.health_detail = f"{exc}; stderr: {exc.log_tail[-300:]}"
        return
    ev.healthy, ev.health_detail = True, f"GET /health on port {ledger.port}"
    ev.boot_s = round(time.monotonic() - t1, 2)
    ev.timings["boot_s"] = round(time.monotonic() - t0, 2)
    ev.first_health = get(ledger.url("/health"), timeout=3.0)

    # -- K1: SIGKILL ledgerd on the held page ---------------------------------------------
    # ledgerd starts its walk right after it is healthy (SPEC 1.1): one that has asked the
    # vendor for no page within the start budget is not walking, and waiting the whole sync
    # budget for its held page would show nothing more (the walk's checks fail either way)
    walking = vendor.walk_started.wait(budgets["start"])
    if walking and vendor.kill_point.wait(budgets["sync"]):
        ev.health_during_sync = get(ledger.url("/health"), timeout=3.0)
        ev.latency_sync = drive.load(ledger, 12)
        drive.kill(ledger)
        ev.killed_mid_sync = True
    vendor.release()
    vendor.mark_phase("after-respawn")
    if ev.killed_mid_sync:
        ok, _took, err = drive.respawn(ledger)
        if not ok:
            ev.respawn_error = err
            return
    t2 = time.monotonic()
    poll(lambda: drive.synced(ledger), budgets["sync"] * 2 if ev.killed_mid_sync else 3.0, 0.25)
    ev.timings["sync_s"] = round(time.monotonic() - t2, 2)
    vendor.drain_hooks(8.0)
    ev.status = drive.status(ledger)

    # -- the API --------------------------------------------------------------------------
    ev.listing, _ = drive.walk_listing(ledger, "", 500)
    ev.truth_at["listing"] = {**ds.truth, **ev.extra_truth}
    ev.listing_text = get(ledger.url("/api/payments?per_page=500&page=1")).text
    ev.paged, ev.paged_total = drive.walk_listing(ledger, "", 97)
    for name, query in drive.FILTERS:
        got, total = drive.walk_listing(ledger, query, 500)
        ev.filters[name] = [str(i.get("id")) for i in got] if got is not None else None
        ev.filter_totals[name] = total
    ev.summary = drive.jget(ledger, "/api/summary")
    for q in drive.BAD_QUERIES:
        ev.bad_queries[q] = get(ledger.url(f"/api/payments?{q}")).status
    ev.latencies = drive.load(ledger, 40)

    # -- concurrent edits, and notes against webhooks and walks ---------------------------
    _edits(ev, vendor, ledger, maker, checker)

    # -- an unsigned webhook: 401, nothing applied (M-HOOK-1) -------------------------------
    if ev.listing and len(ev.listing) > 7000:
        pid = str(ev.listing[7000]["id"])
        st, ver = _final(ev)[pid]
        ev.unsigned_hook = [pid, ver + UNSIGNED_BUMP]
        body: dict[str, Any] = {
            "event_id": "evt_unsigned",
            "type": "payment.updated",
            "payment_id": pid,
        }
        body |= {"status": next(s for s in STATUSES if s != st), "version": ver + UNSIGNED_BUMP}
        ev.calls["hook:unsigned"] = drive.call(
            ledger.url("/webhooks/vendor"),
            "POST",
            body,
            headers={"X-Meridian-Timestamp": str(int(time.time()))},
        )

    # -- drafts: validation, roles ---------------------------------------------------------
    api = ledger.url("/api/drafts")
    good = drive.DRAFTS["a"][1]
    ev.calls["create:no-token"] = drive.call(api, "POST", good)
    ev.calls["create:unknown"] = drive.call(api, "POST", good, UNKNOWN_TOKEN)
    ev.calls["create:checker"] = drive.call(api, "POST", good, checker["token"])
    for i, bad in enumerate(drive.BAD_DRAFTS):
        ev.calls[f"bad:{i}"] = drive.call(api, "POST", bad, maker["token"])
    ev.drafts_after_bad = drive.jget(ledger, "/api/drafts")
    for tag, (role, body) in drive.DRAFTS.items():
        got = drive.call(api, "POST", body, ds.user(role)["token"])  # type: ignore[assignment]
        ev.calls[f"create:{tag}"] = got
        if got.status == 201 and isinstance(got.body, dict) and got.body.get("id"):  # type: ignore[union-attr]
            ev.drafts[tag] = str(got.body["id"])  # type: ignore[union-attr]
    if "a" in ev.drafts:
        target = ledger.url(f"/api/drafts/{ev.drafts['a']}/approve")
        ev.calls["approve:no-token"] = drive.call(target, "POST")
        ev.calls["approve:unknown"] = drive.call(target, "POST", None, UNKNOWN_TOKEN)
        ev.calls["approve:maker"] = drive.call(target, "POST", None, maker["token"])
    if "c" in ev.drafts:  # the lead made c: the lead may not approve it
        ev.calls["approve:own"] = drive.call(
            ledger.url(f"/api/drafts/{ev.drafts['c']}/approve"), "POST", None, lead["token"]
        )
    if "e" in ev.drafts:  # a maker made e: the lead may approve it
        ev.calls["approve:lead"] = drive.call(
            ledger.url(f"/api/drafts/{ev.drafts['e']}/approve"), "POST", None, lead["token"]
        )

    # -- journeys 1-4: load, the field, sync, approval -------------------------------------
    # what the API says just before the console's pages are read (edits and a webhook
    # moved notes and a status since the listing): their status and note cells show it
    # enough events that the feed's 50 most recent are not all there are (M-UI-9)
    for k in range(FEED_FILL):
        if len(ev.listing or []) > 8000 + k:
            pid = str(ev.listing[8000 + k]["id"])
            st, ver = _final(ev)[pid]
            post_event(ev, vendor, ledger, pid, next(s for s in STATUSES if s != st), ver + 1)
    ev.listing_pages, _ = drive.walk_listing(ledger, "", 500)
    tb = time.monotonic()
    try:
        _session_main(ev, vendor, ledger, checker)
    except BrowserUnavailable as exc:
        ev.probe_error = str(exc)
    ev.timings["browser_s"] = round(time.monotonic() - tb, 2)
    ev.resync_status = drive.status(ledger)
    if "a" in ev.drafts:
        ev.calls["approve:again"] = drive.call(
            ledger.url(f"/api/drafts/{ev.drafts['a']}/approve"), "POST", None, checker["token"]
        )

    # -- K2: SIGKILL while the vendor holds a creation -------------------------------------
    if "b" in ev.drafts:
        vendor.mark_phase("approval")
        vendor.hold_next_create()
        box: list[Any] = []
        target = ledger.url(f"/api/drafts/{ev.drafts['b']}/approve")
        th = threading.Thread(
            target=lambda: box.append(drive.call(target, "POST", None, checker["token"]))
        )
        th.start()
        ev.held_create = vendor.create_point.wait(8.0)
        drive.kill(ledger)
        vendor.release_create()
        th.join(15.0)
        vendor.mark_phase("after-approval-kill")
        ok, _took, err = drive.respawn(ledger)
        if not ok:
            ev.approval_kill_error = err
            return
        did = ev.drafts["b"]
        poll(
            lambda: (drive.jget(ledger, f"/api/drafts/{did}") or {}).get("state") == "executed",
            budgets["approval"],
            0.2,
        )
        ev.draft_states["b"] = drive.jget(ledger, f"/api/drafts/{did}")

    # -- partition notifierd -> ledgerd; the ledger works on ---------------------------------
    _partition(ev, vendor, n2l, l2n, ledger, notifier, checker)
    # -- K3: SIGKILL notifierd while the relay holds its read --------------------------------
    _notifier_kill(ev, n2l, ledger, notifier, maker)

    # -- journey 5: error states (feed cut off, vendor down) --------------------------------
    try:
        _session_errors(ev, vendor, l2n, ledger, checker)
    except BrowserUnavailable as exc:
        ev.probe_error = str(exc)
    l2n.set("pass")

    # -- K4: both killed, vendor offline, cold boot -----------------------------------------
    ev.before_cold = {
        "listing": drive.walk_listing(ledger, "", 500)[0],
        "drafts": drive.jget(ledger, "/api/drafts"),
        "events": drive.events_of(ledger),
        "notes": drive.notes_of(notifier) if ev.notifier_healthy else None,
    }
    vendor.mark_phase("offline")
    vendor.set_offline(True)
    drive.kill(ledger)
    if ev.notifier_healthy:
        drive.kill(notifier)
    cold: dict[str, Any] = {}
    if ev.notifier_healthy:
        cold["notifier_ok"], cold["notifier_s"], cold["notifier_err"] = drive.respawn(notifier)
    cold["t_boot_ms"] = vendor.now_ms()  # the vendor's clock: when ledgerd was started
    cold["ok"], cold["boot_s"], cold["err"] = drive.respawn(ledger)
    ev.cold = cold
    if not cold["ok"]:
        return
    cold["down_after_s"] = drive.poll_true(
        lambda: (drive.status(ledger) or {}).get("vendor") == "down", budgets["down"], 0.2
    )
    cold["status"] = drive.status(ledger)
    cold["listing"] = drive.walk_listing(ledger, "", 500)[0]
    ev.truth_at["cold"] = _final(ev)
    cold["drafts"] = drive.jget(ledger, "/api/drafts")
    cold["events"] = drive.events_of(ledger)
    if ev.notifier_healthy and cold.get("notifier_ok"):
        poll(lambda: drive.caught_up(ledger, notifier), _reads_ledger(n2l)(6.0), 0.2)
        cold["notes"] = drive.notes_of(notifier)
    try:
        _session_cold(ev, ledger)
    except BrowserUnavailable as exc:
        ev.probe_error = str(exc)
    # watch long enough that a ledgerd trying only at its start is told from one that
    # keeps trying (at most every 5 s, SPEC Appendix B)
    rest = cold["t_boot_ms"] / 1000.0 + COLD_WATCH_S - vendor.now_ms() / 1000.0
    if rest > 0:
        time.sleep(rest)
    cold["t_end_ms"] = vendor.now_ms()  # until here ledgerd kept trying, or did not
    ev.events = cold["events"]
    ev.notifications = cold.get("notes")
