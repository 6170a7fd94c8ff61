"""The run's browser sessions: journeys 1-4 in one session (the console, the 3D field,
the sync and the approval), the error states and the cold-boot console."""

from __future__ import annotations

import time
from typing import Any

from harness.appkit.browser import browser_session
from harness.appkit.fetch import poll
from harness.appkit.procs import AppProcess

from . import browse, drive
from .api_steps import _final
from .fixtures import EXPONENTS, MARKUP_NAMES

#: the vendor-down banner is shown: visible and saying "unavailable" (SPEC 6.3)
BANNER_JS = (
    "() => { const e = document.querySelector('#vendor-down'); return !!e &&"
    " e.getClientRects().length > 0 && /unavailable/i.test(e.innerText); }"
)

ERROR_JS = (
    "() => { const e = document.querySelector('#error'); return !!e &&"
    " e.getClientRects().length > 0 && e.innerText.trim().length > 0; }"
)

#: Seconds a pick may take before it counts as missed (the SPEC says 1 s; see _field).
PICK_WAIT_S = 6.0


def _session_main(ev: Any, vendor: Any, ledger: AppProcess, checker: Any) -> None:
    ds = ev.dataset
    order = [p.id for p in ds.api_order()]
    per = 100
    want = [1]
    for test in (
        lambda p: p.amount_minor > 2**53,
        lambda p: p.counterparty in MARKUP_NAMES,
        lambda p: -(10 ** EXPONENTS[p.currency]) < p.amount_minor < 0,
        # the page that spans Berlin's switch to summer time (2026-03-29 01:00 UTC)
        lambda p: p.created_at >= "2026-03-29T00:30:00Z",
    ):
        idx = next(i for i, pid in enumerate(order) if test(ds.by_id[pid]))
        if idx // per + 1 not in want:
            want.append(idx // per + 1)
    # the pages of the edited payments: x's winning note, y's note with markup
    for pid in (ev.edits.get("x_id"), ev.edits.get("y_id")):
        if pid in order and order.index(pid) // per + 1 not in want:
            want.append(order.index(pid) // per + 1)
    last = -(-len(order) // per)
    if last not in want:
        want.append(last)
    out: dict[str, Any] = {"pages": {}}
    with browser_session(ev.evidence_dir, timeout=10.0) as j:
        page = j.page
        page.add_init_script(browse.GL_WRAP)
        requests: list[dict[str, Any]] = []

        def on_response(resp: Any) -> None:
            try:
                body = resp.body()
            except Exception:
                body = None
            seen = {"url": resp.url, "status": resp.status, "type": resp.request.resource_type}
            seen["size"] = None if body is None else len(body)
            if body is not None and "/api/" not in resp.url:  # a file: whose code is it?
                seen["marks"] = browse.third_party_marks(body.decode("utf-8", "replace"))
            requests.append(seen)

        # when the console asks for its feed, per page load (M-UI-9: at least every 2 s)
        loads = [0]
        feed_asks: list[list[float]] = []

        def on_navigated(frame: Any) -> None:
            if frame == page.main_frame:
                loads[0] += 1

        def on_request(req: Any) -> None:
            if "/api/feed" in req.url:
                feed_asks.append([loads[0], round(time.monotonic(), 3)])

        page.on("framenavigated", on_navigated)
        page.on("request", on_request)
        page.on("response", on_response)
        page.on(
            "requestfailed",
            lambda r: requests.append(
                {"url": r.url, "status": None, "size": None, "type": r.resource_type}
            ),
        )
        # J1 load
        t_sess = time.monotonic()
        first = browse.open_console(page, ledger.url("/"), 100)
        out["load"] = first
        page.wait_for_timeout(300)
        out["pages"][1] = {"rows": browse.table(page, "#payments"), **first}
        out["totals"] = browse.table(page, "#totals")
        out["console_errors"] = list(j.console_errors)
        out["requests"] = list(requests)
        out["shot_load"] = str(j.screenshot("load"))
        lap = _lap(ev, "b_load", t_sess)
        # J3 the field
        out["field"] = _field(page, ds, ev)
        lap = _lap(ev, "b_field", lap)
        for n in want[1:]:
            look = browse.open_console(page, ledger.url(f"/?page={n}"), 1)
            page.wait_for_timeout(200)
            out["pages"][n] = {"rows": browse.table(page, "#payments"), **look}
        out["console_errors_all"] = list(j.console_errors)
        lap = _lap(ev, "b_pages", lap)
        # J2 sync: a walk asked for while the console is open; its notification shows
        browse.open_console(page, ledger.url("/"), 100)
        before = drive.events_of(ledger) or []
        vendor.apply_resync_changes()
        vendor.mark_phase("resync")
        ev.resync = drive.call(ledger.url("/api/sync"), "POST")
        ev.resync_again = drive.call(ledger.url("/api/sync"), "POST")
        resyncing = poll(
            lambda: any(
                r.get("kind") == "page" and r["phase"] == "resync" for r in vendor.records()
            ),
            5.0,
        )
        if resyncing:  # no page asked for within 5 s of POST /api/sync: no walk to wait for
            poll(lambda: drive.synced(ledger), 40.0, 0.25)
        seen = {e.get("seq") for e in before}
        new = [
            e
            for e in (drive.events_of(ledger) or [])
            if e.get("seq") not in seen and e.get("kind") == "sync.completed"
        ]
        sync_out: dict[str, Any] = {"event": new[-1] if new else None}
        if new:
            seq = new[-1].get("seq")
            sync_out["feed_s"] = browse.wait_js(
                page, '(s) => !!document.querySelector(`#feed li[data-seq="${s}"]`)', 8.0, seq
            )
        out["sync"] = sync_out
        lap = _lap(ev, "b_sync", lap)
        ev.after_resync = {"listing": drive.walk_listing(ledger, "", 500)[0]}
        ev.truth_at["resync"] = _final(ev)
        # J4 approval by click
        did = ev.drafts.get("a")
        if did:
            out["drafts_rows"] = browse.table(page, "#drafts")
            out["feed_rows"] = browse.feed(page)
            out["approve"] = _approve(page, j, did, checker["token"])
            out["approve"]["api"] = drive.jget(ledger, f"/api/drafts/{did}")
            evs = [
                e
                for e in (drive.events_of(ledger) or [])
                if e.get("kind") == "draft.executed" and e.get("draft_id") == did
            ]
            if evs:
                out["approve"]["event_seq"] = evs[0].get("seq")
                out["approve"]["feed_s"] = browse.wait_js(
                    page,
                    '(s) => !!document.querySelector(`#feed li[data-seq="${s}"]`)',
                    8.0,
                    evs[0].get("seq"),
                )
            out["feed_after"] = browse.feed(page)
            out["shot_approve"] = str(j.screenshot("approve"))
        _lap(ev, "b_approve", lap)
        out["feed_asks"] = list(feed_asks)
        out["console_errors_end"] = list(j.console_errors)  # the sync and approval too
    ev.browser["main"] = out


def _lap(ev: Any, name: str, since: float) -> float:
    now = time.monotonic()
    ev.timings[name] = round(now - since, 2)
    return now


def _approve(page: Any, j: Any, did: str, token: str) -> dict[str, Any]:
    from playwright.sync_api import Error as PlaywrightError

    out: dict[str, Any] = {}
    sel = f'button.approve[data-draft="{did}"]'
    out["button"] = (
        browse.wait_js(page, f"() => !!document.querySelector('{sel}')", 6.0) is not None
    )
    if not out["button"]:
        return out
    try:
        page.fill("#token", token)
        page.click(sel, timeout=5000)
    except PlaywrightError as exc:
        out["click_error"] = str(exc).splitlines()[0]
        return out
    done = f"""() => {{ const r = document.querySelector('#drafts tr[data-id="{did}"]');
        return !!r && /\\bexecuted\\b/i.test(r.innerText); }}"""
    out["executed_s"] = browse.wait_js(page, done, 8.0)
    return out


def _field(page: Any, ds: Any, ev: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    n = len(ev.listing or [])
    out["expected"] = n
    drawn = "(n) => { const g = window.__gl; return !!g && g.log.some(e => e.screen && (e.op === 'inst' || e.op === 'blit') && e.n > 0); }"  # noqa: E501  (a calibrated string, kept as it was scored)
    t = browse.wait_js(page, drawn, 8.0, n)
    out["first_frame_s"] = t
    # a console may fill the field as its data arrives: read the pixels once a frame
    # draws every payment (M-GL-1), not from the first partial one
    full = f"(n) => {{ const f = ({browse.LAST_FRAME_JS})(); return !!f && !!f.last && f.last.inst >= n; }}"  # noqa: E501  (a calibrated string, kept as it was scored)
    out["full_frame_s"] = browse.wait_js(page, full, 8.0, n) if t is not None else None
    page.wait_for_timeout(600)
    out["state"] = browse.field_state(page)
    box = browse.canvas_box(page)
    out["box"] = box
    if box is None or not ev.listing:
        return out
    # the field places the stored payments in the SPEC's order (created_at, then id), not
    # in the order the app's listing came in: a listing ordered wrong is api.order's fault
    listing = sorted(ev.listing, key=lambda it: (str(it.get("created_at")), str(it.get("id"))))
    r = __import__("random").Random(ds.tokens["vendor_key"])
    # every payment's cell (SPEC: "the pixel at the centre of each payment's cell"): the
    # few negative amounts and those above 2^53 are where a field goes wrong
    sample = list(range(len(listing)))
    points = [((i % 128 + 0.5) * 8, (i // 128 + 0.5) * 8) for i in sample]
    gaps = [((i % 128 + 1.0) * 8, (i // 128 + 0.5) * 8) for i in sample if i % 128 != 127]
    got = browse.pixels(page, points + gaps)
    if got is None:
        return out
    out["hash_default"] = got["hash"]
    out["css"], out["dev"] = got["css"], got["dev"]
    cells = got["px"][: len(points)]
    # the status each cell must show: the listing's, but where the scorer moved a payment
    # since (the webhook of the edits journey, accepted by the app) the moved status
    then = ev.truth_at.get("listing") or {}
    moved = {pid: sv[0] for pid, sv in ev.extra_truth.items() if then.get(pid) != sv}

    def expected(i: int) -> Any:
        return moved.get(str(listing[i].get("id")), listing[i].get("status"))

    out["cells"] = [(i, expected(i), px) for i, px in zip(sample, cells, strict=True)]
    out["gaps"] = got["px"][len(points) :]
    # picking: real clicks at cell centres
    picks = []
    specials = [i for i, item in enumerate(listing) if item.get("counterparty") in MARKUP_NAMES][:1]
    for i in r.sample(range(len(listing)), 4) + specials:
        here = browse.canvas_box(page) or box  # the console's layout may move between clicks
        x, y = here["x"] + (i % 128 + 0.5) * 8, here["y"] + (i // 128 + 0.5) * 8
        page.mouse.click(x, y)
        want = str(listing[i].get("id"))
        # SPEC: within 1 s. Software WebGL on two shared cores renders the id buffer of
        # 12,288 instances in seconds under load (the reference missed 2.5 s at load 18),
        # so the wait allows PICK_WAIT_S; the time itself is recorded (``took``)
        took = browse.wait_js(
            page,
            "(id) => { const p = document.querySelector('#pick');"
            " return !!p && p.getAttribute('data-id') === id; }",
            PICK_WAIT_S,
            want,
        )
        info = browse.shown(page, "#pick") or {}
        picks.append(
            {
                "index": i,
                "id": want,
                "took": took,
                "text": info.get("text", ""),
                "visible": info.get("visible"),
                "item": listing[i],
                "status": expected(i),  # its status when the field's data was read
            }
        )
    out["picks"] = picks
    # orbit: drag, then reset
    box = browse.canvas_box(page) or box
    cx, cy = box["x"] + box["w"] / 2, box["y"] + box["h"] / 2
    frames_before = (browse.field_state(page) or {}).get("frames", 0)
    page.mouse.move(cx, cy)
    page.mouse.down()
    for k in range(1, 11):
        page.mouse.move(cx + 18 * k, cy + 9 * k)
    page.mouse.up()
    page.wait_for_timeout(500)
    after = browse.pixels(page, points[:20]) or {}
    grid = browse.grid_cells()
    # four samples per grid cell: its centre, its edges' middles and its corner (a pan by
    # half a cell along an axis puts the centres in the gaps and the edges on columns)
    spots = [((x + u) * 8, (y + v) * 8) for u, v in browse.PAN_SPOTS for x, y in grid]
    over = browse.pixels(page, spots) or {}
    out["orbit"] = {
        "hash": after.get("hash"),
        "state": browse.field_state(page),
        "frames_before": frames_before,
        "grid_px": over.get("px"),  # what the drag left, for a pan (browse.pan_shift)
    }
    out["layout"] = "".join(str(expected(i))[:1] for i in range(len(listing)))
    try:
        page.click("#field-reset", timeout=3000)
        page.wait_for_timeout(1200)
        back = browse.pixels(page, points) or {}
        out["reset"] = {"hash": back.get("hash"), "px": back.get("px")}
    except Exception as exc:
        out["reset"] = {"error": str(exc).splitlines()[0]}
    return out


def _approve_unanswered(page: Any, did: str, token: str, url: str) -> dict[str, Any]:
    """SPEC 6.2 [M-UI-7] "an error status from ledgerd or no answer": the browser drops the
    approval's request before it leaves (a reset), so ledgerd never sees it and the draft
    stays pending; the console must say so. A fresh load then clears what it showed."""
    sel = f'button.approve[data-draft="{did}"]'
    if browse.wait_js(page, f"() => !!document.querySelector('{sel}')", 6.0) is None:
        return {"button": False}
    out: dict[str, Any] = {"button": True}

    def drop(route: Any) -> None:
        if route.request.method == "POST":
            route.abort("connectionreset")
        else:
            route.continue_()

    page.route("**/*", drop)
    try:
        page.fill("#token", token)
        page.click(sel, timeout=5000)
        out["error_s"] = browse.wait_js(page, ERROR_JS, 8.0)
        out["error"] = browse.shown(page, "#error")
    except Exception as exc:
        out["click_error"] = str(exc).splitlines()[0]
    finally:
        page.unroute("**/*", drop)
    browse.open_console(page, url, 100)
    return out


def _session_errors(ev: Any, vendor: Any, l2n: Any, ledger: AppProcess, checker: Any) -> None:
    out: dict[str, Any] = {}
    l2n.set("refuse")
    with browser_session(ev.evidence_dir, timeout=10.0) as j:
        page = j.page
        out["load"] = browse.open_console(page, ledger.url("/"), 100)
        out["feed_error_s"] = browse.wait_js(
            page,
            "() => { const e = document.querySelector('#feed-error'); return !!e &&"
            " e.getClientRects().length > 0 && e.innerText.trim().length > 0; }",
            6.0,
        )
        out["feed_error"] = browse.shown(page, "#feed-error")
        out["rows_feed_down"] = browse.table(page, "#payments")
        out["shot_feed"] = str(j.screenshot("feed-down"))
        did = ev.drafts.get("f")
        if did:  # first the approval that gets no answer, then the one ledgerd refuses
            out["unanswered"] = _approve_unanswered(page, did, checker["token"], ledger.url("/"))
        # the vendor goes away; an approval fails and says so; the banner comes
        vendor.mark_phase("vendor-down")
        vendor.set_offline(True)
        if did:
            sel = f'button.approve[data-draft="{did}"]'
            out["button"] = (
                browse.wait_js(page, f"() => !!document.querySelector('{sel}')", 6.0) is not None
            )
            if out["button"]:
                try:
                    page.fill("#token", checker["token"])
                    page.click(sel, timeout=5000)
                    out["error_s"] = browse.wait_js(page, ERROR_JS, 15.0)
                except Exception as exc:
                    out["click_error"] = str(exc).splitlines()[0]
            out["error"] = browse.shown(page, "#error")
            out["draft_f"] = drive.jget(ledger, f"/api/drafts/{did}")
            out["draft_row"] = [r for r in browse.table(page, "#drafts") if r.get("id") == did]
        out["banner_s"] = browse.wait_js(page, BANNER_JS, 8.0)
        out["banner"] = browse.shown(page, "#vendor-down")
        out["rows_vendor_down"] = browse.table(page, "#payments")
        out["shot_down"] = str(j.screenshot("vendor-down"))
    vendor.set_offline(False)
    vendor.mark_phase("back")
    ev.browser["errors"] = out


def _session_cold(ev: Any, ledger: AppProcess) -> None:
    out: dict[str, Any] = {}
    with browser_session(ev.evidence_dir, timeout=10.0) as j:
        page = j.page
        out["load"] = browse.open_console(page, ledger.url("/"), 100)
        page.wait_for_timeout(1500)
        out["rows"] = browse.table(page, "#payments")
        out["feed"] = browse.feed(page)
        # the console may check the status only every 3 s (SPEC 6.3): wait that long
        out["banner_s"] = browse.wait_js(page, BANNER_JS, 3.0 + 0.5)
        out["banner"] = browse.shown(page, "#vendor-down")
        out["shot"] = str(j.screenshot("cold-boot"))
    ev.browser["cold"] = out
