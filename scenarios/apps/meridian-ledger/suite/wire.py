"""Checks of wire behaviour, read from the vendor's trace: the API key, one page at a
time, retries of a drop, a 500 and a 429 with their pauses and attempts, the slow page,
conditional requests and idempotency keys."""

from __future__ import annotations

from typing import Any

from harness.appkit import grading
from harness.scoring import Outcome, absent, fraction, graded

from .bounds import BACKOFF_CAP_S, BACKOFF_FACTOR, BACKOFF_MIN_S, MIN_ATTEMPTS
from .evidence import Evidence
from .grader import suite
from .vendor_model import ERROR_REPEATS, PAGES, RETRY_AFTER

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
        f"page {page}: {ERROR_REPEATS} 500s in a row; fetched at attempt {fetched} of {len(asks)}",
    )


@suite.check(
    "wire.retry_after",
    musts=("M-WIRE-6",),
    tier="wire",
    root="app.boots",
    harm="ignored Retry-After: the client retries before the vendor allowed it",
)
def wire_retry_after(ev: Evidence) -> Outcome:
    return _retried(ev, ev.dataset.faults.rate_page, float(RETRY_AFTER), "429")


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
