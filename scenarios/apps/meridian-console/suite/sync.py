"""Checks of tier C: the walk stores every payment once, resumes, reports its status, walks
again on request, picks up changes and continues after the outage."""

from __future__ import annotations

from collections import Counter
from typing import Any

from harness.appkit.grading import holds
from harness.scoring import Outcome, absent

from .fixtures import PAGES
from .grader import ck
from .readers import ids, need_listing, truth_order

# -- C: sync ----------------------------------------------------------------------------


@ck(
    "sync.complete",
    None,
    "missing payments: the ledger lacks vendor payments",
    ("M-SYNC-9",),
    critical=True,
    severity="data",
)
def sync_complete(ev: Any) -> Outcome:
    if (miss := need_listing(ev)) is not None:
        return miss
    have = set(ids(ev.listing))
    want = truth_order(ev)
    got = sum(1 for i in want if i in have)
    return holds(got == len(want), f"{got}/{len(want)} vendor payments listed")


@ck("sync.no_duplicates", "sync", "double counting: a payment stored twice", ("M-SYNC-9",))
def sync_no_duplicates(ev: Any) -> Outcome:
    if (miss := need_listing(ev)) is not None:
        return miss
    dup = [k for k, n in Counter(ids(ev.listing)).items() if n > 1]
    return holds(not dup, f"{len(dup)} ids listed more than once")


@ck("sync.resumes", "sync", "wasted walk: a restart fetches stored pages again", ("M-SYNC-8",))
def sync_resumes(ev: Any) -> Outcome:
    if not ev.killed_mid_sync:
        return absent("the held page was never reached")
    kill = ev.dataset.faults.kill_page
    after = [r.get("page") for r in ev.pages("after-respawn")]
    if not after:
        return absent("no page asked after the respawn")
    early = [p for p in after if p is not None and p < kill]
    return holds(
        not early and after[0] == kill,
        f"after the respawn: first page {after[0]}, {len(early)} stored pages refetched",
    )


@ck(
    "sync.status", "sync", "blind operators: the status does not say the walk is done", ("M-API-1",)
)
def sync_status(ev: Any) -> Outcome:
    st = ev.status
    if not isinstance(st, dict):
        return absent("no status")
    n = len(set(ids(ev.listing)))
    ok = (
        st.get("sync") == "done"
        and st.get("pages_done") == PAGES
        and st.get("payments") == n
        and st.get("vendor") == "up"  # the walk just succeeded: nothing failed since
    )
    return holds(ok, f"status {st}")


@ck("sync.on_request", "sync", "stale data: POST /api/sync does not walk again", ("M-API-2",))
def sync_on_request(ev: Any) -> Outcome:
    got = ev.resync
    if got is None:
        return absent("no second walk asked")
    walked = {r.get("page") for r in ev.pages("resync") if r.get("status") in (200, 304)}
    ok = (
        got.status == 202
        and len(walked) == PAGES
        and (ev.resync_status or {}).get("sync") == "done"
    )
    return holds(ok, f"POST /api/sync: {got.status}; pages walked {len(walked)}")


@ck(
    "sync.no_concurrent",
    "sync",
    "corrupt state: a second walk started beside the first",
    ("M-API-2",),
)
def sync_no_concurrent(ev: Any) -> Outcome:
    got = ev.resync_again
    if got is None:
        return absent("no second POST")
    pages = [r.get("page") for r in ev.pages("resync") if r.get("status") in (200, 304)]
    dup = [p for p, n in Counter(pages).items() if n > 1]
    return holds(
        got.status == 409 and not dup, f"second POST: {got.status}; pages walked twice: {len(dup)}"
    )


@ck(
    "sync.resync_changes",
    "sync",
    "stale data: pages changed between walks are not stored",
    ("M-SYNC-10",),
)
def sync_resync_changes(ev: Any) -> Outcome:
    items = (ev.after_resync or {}).get("listing")
    if not items:
        return absent("no listing after the second walk")
    by = {str(i.get("id")): i for i in items}
    truth = ev.truth_at.get("resync") or {}
    changed = list(ev.dataset.resync_changes)
    good = sum(
        1
        for pid in changed
        if pid in by and (by[pid].get("status"), by[pid].get("version")) == truth.get(pid)
    )
    return holds(good == len(changed), f"{good}/{len(changed)} changed payments current")


@ck(
    "sync.outage_continues",
    "sync",
    "wasted walk: the outage restarts the walk from page 1",
    ("M-SYNC-5",),
)
def sync_outage_continues(ev: Any) -> Outcome:
    page = ev.dataset.faults.outage_page
    reqs = ev.walk()
    idx = [k for k, r in enumerate(reqs) if r.get("page") == page and r.get("outage")]
    if not idx:
        return absent("the outage never happened")
    nxt = [r.get("page") for r in reqs[idx[0] + 1 :] if not r.get("outage")]
    return holds(bool(nxt) and nxt[0] == page, f"after the outage the walk asked page {nxt[:1]}")
