"""Checks of sync discipline: every payment stored once, the resume after SIGKILL, one
walk at a time, the status at the end and a sync on request."""

from __future__ import annotations

import json
from collections import Counter

from harness.appkit import grading
from harness.scoring import Outcome, absent, fraction, graded

from .check_helpers import _ids, _no_listing
from .evidence import Evidence
from .grader import suite
from .vendor_model import PAGES


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
