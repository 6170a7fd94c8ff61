"""Checks of the sync under the upstream's faults: every invoice, once, in order, retried,
paced, awaited."""

import itertools
from collections import Counter

from harness.appkit.grading import (
    LATENCY_ALLOWANCE_S,
    TIMER_SLACK_S,
    each,
    first_pause_ok,
    strict,
)
from harness.scoring import Outcome, absent, graded

from .evidence import LIVES, Evidence, life_of, lives_of, why
from .grader import suite
from .schedule import (
    FIRST_PAUSE_S,
    GIVE_UP_SLACK_S,
    GROWTH,
    PAUSE_CAP_S,
    TIMEOUT_S,
    blip_pages,
)

LATENCY_FLOOR_S = 0.1  # the least latency a pause is allowed (see ``_latency``)


@suite.check(
    "sync.complete",
    critical=True,
    severity="data",
    root="app.health",
    musts=("M-SYNC-1",),
    harm="missing invoices: the copy silently lacks part of the upstream",
)
def sync_complete(ev: Evidence) -> Outcome:
    if ev.invoices(ev.listing) is None:
        return absent(f"GET /api/invoices gave no invoice list ({why(ev, ev.listing)})")
    have = set(ev.ids(ev.listing))
    want = [inv.id for inv in ev.dataset.invoices]
    state = ev.status.get("state") if isinstance(ev.status, dict) else None
    stalled = f"; the sync stalled ({ev.stalled})" if ev.stalled else ""
    return each(
        want, lambda i: i in have, f"expected invoices stored (state {state}{stalled})", str
    )


@suite.check(
    "sync.no_duplicates",
    tier="core",
    root="app.health",
    musts=("M-SYNC-7",),
    harm="double counting: an invoice listed twice inflates totals",
)
def sync_no_duplicates(ev: Evidence) -> Outcome:
    if ev.invoices(ev.listing) is None:
        return absent(f"GET /api/invoices gave no invoice list ({why(ev, ev.listing)})")
    ids = ev.ids(ev.listing)
    dupes = sorted(i for i, n in Counter(ids).items() if n > 1)
    return graded(
        0.0 if dupes else 1.0,
        f"{len(set(ids))}/{len(ids)} unique entries; duplicated: {dupes[:3]}",
    )


@suite.check(
    "sync.in_order",
    tier="core",
    root="app.health",
    musts=("M-SYNC-8",),
    harm="overloaded upstream: pages requested in parallel or out of order",
)
def sync_in_order(ev: Evidence) -> Outcome:
    reqs = [r for r in ev.requests() if r["phase"] != "offline" and r.get("page") is not None]
    if not reqs:
        return absent("the upstream was never asked for a page")
    bad = []
    for life in LIVES:  # the restart with the upstream down belongs to the third life
        last = -1
        for r in (r for r in reqs if life_of(r["phase"]) == life):
            if r["inflight"] or r["page"] < last:
                bad.append(r["seq"])
            last = max(last, r["page"])
    return strict(
        len(reqs) - len(bad),
        len(reqs),
        f"requests one at a time, in order; bad seq {bad[:3]}",
    )


@suite.check(
    "sync.retries_503",
    tier="resilience",
    root="app.health",
    musts=("M-SYNC-2",),
    harm="fragile sync: repeated transient upstream errors lose a page",
)
def sync_retries_503(ev: Evidence) -> Outcome:
    faults = ev.dataset.faults
    got = []
    for page in (faults.backoff_page, *blip_pages(ev.dataset)):
        asks = ev.page_requests(page)
        failed = [r for r in asks if r["status"] == 503]
        got.append(
            bool(failed) and any(r["status"] == 200 and r["seq"] > failed[0]["seq"] for r in asks)
        )
    return strict(
        sum(got),
        len(got),
        f"pages answering 503 ({ev.backoff_run} times in a row; blips once) eventually fetched",
    )


def _backoff(ev: Evidence) -> tuple[int, list[list[float]]]:
    """The backoff page and the app's plain pauses on it (those after a 503 without
    Retry-After), one list per life: a Retry-After pause is M-SYNC-5's, and the next
    plain pause grows from the plain one before it."""
    page = ev.dataset.faults.backoff_page
    lives = []
    for life in lives_of(ev, page):
        pauses = ev.pauses(life)
        lives.append([g for g, r in zip(pauses, life, strict=False) if r["fault"] != "retry-after"])
    return page, lives


@suite.check(
    "sync.backoff_first",
    tier="resilience",
    root="app.health",
    musts=("M-SYNC-3",),
    harm="retry storm: a struggling upstream is asked again before 0.2 s",
)
def sync_backoff_first(ev: Evidence) -> Outcome:
    """Every first retry the run shows (the backoff page's in each life, a restarted app
    starts over, each blip's, the slow page's): a gap from the 503's leaving the mock is
    the pause plus the retry's latency, never less, so a right app never misses; a short
    pause shows on the retry with the least latency, a pause counted from the ask on a 503
    that was slow to arrive."""
    page = ev.dataset.faults.backoff_page
    firsts = [
        (page, g[0])
        for life in lives_of(ev, page)
        if (g := ev.pauses(life)) and life[0]["fault"] != "retry-after"
    ]
    for blip in (*blip_pages(ev.dataset), ev.dataset.faults.slow_page):
        firsts += [(blip, g[0]) for g in (ev.pauses(life) for life in lives_of(ev, blip)) if g]
    if not firsts:
        return absent(f"page {page} (503 several times) and the blips were never retried")
    ok = all(first_pause_ok([f], FIRST_PAUSE_S) for _, f in firsts)
    shown = ", ".join(f"page {p} {f:.3f} s" for p, f in firsts)
    return graded(1.0 if ok else 0.0, f"first retries after {shown} (SPEC >= 0.2 s)")


@suite.check(
    "sync.backoff_growth",
    tier="resilience",
    root="app.health",
    musts=("M-SYNC-4",),
    harm="retry storm: the pause between retries does not grow 1.5x each time",
)
def sync_backoff_growth(ev: Evidence) -> Outcome:
    page, lives = _backoff(ev)
    retried = sum(len(p) for p in lives) + len(lives) - 1  # a retry across a kill counts
    if retried < ev.backoff_run - len(ev.retry_afters):  # the plain 503s of the run
        return absent(f"page {page} (503 {ev.backoff_run} times) retried {retried} times")
    latency = _latency(ev)
    bad = [b for p in lives for b in _growth_misses(p, latency)]
    shown = " | ".join(", ".join(f"{g:.3f}" for g in p) for p in lives)
    return graded(
        0.0 if bad else 1.0,
        f"page {page}: plain pauses {shown} s (latency allowed {latency:.3f} s, measured on "
        f"this run); {bad or 'growing 1.5x up to the cap'}",
    )


def _latency(ev: Evidence) -> float:
    """The latency allowed a pause, measured on this run: the longest of the app's page
    turnarounds (a plain 200 answer to its next request, in one life) and of its
    /api/status answers, at least ``LATENCY_FLOOR_S`` (a retry's own wake-up and
    reconnect, which no answer shows, varies by that much at load 15-20) and at most the
    kit's allowance. A linear backoff or one capped at 2 s needs 0.33 s or more to pass
    over six or seven pauses."""
    turns = [s.rtt_s for s in ev.samples]
    for life in LIVES:
        asks = [r for r in ev.requests(life) if r.get("page") is not None]
        for prev, nxt in itertools.pairwise(asks):
            if prev["status"] == 200 and prev.get("fault") is None:
                turns.append((nxt["t_ms"] - prev["t_ms"]) / 1000.0)
    return min(LATENCY_ALLOWANCE_S, max([LATENCY_FLOOR_S, *turns]))


def _growth_misses(pauses: list[float], latency: float) -> list[str]:
    """Where the pauses miss the SPEC's schedule: each at least ``GROWTH`` times the
    previous one (less the latency that one carried), never below the least schedule
    from ``FIRST_PAUSE_S``, a pause at the cap excepted. A short first pause is
    M-SYNC-3's miss; the least schedule then starts from it (10% for its latency)."""
    bad = []
    # short only when M-SYNC-3 failed: a first gap within the timer slack of 0.2 s is a
    # 0.2 s pause, and the least schedule runs from 0.2 s (a 0.18 s pause with 0.02 s of
    # latency then falls under it within six pauses)
    short = bool(pauses) and pauses[0] < FIRST_PAUSE_S - TIMER_SLACK_S
    base = pauses[0] * 0.9 if short else FIRST_PAUSE_S
    for k, got in enumerate(pauses):
        least = min(PAUSE_CAP_S, base * GROWTH**k) - TIMER_SLACK_S
        grown = min(PAUSE_CAP_S, GROWTH * (pauses[k - 1] - latency)) - TIMER_SLACK_S
        if got < least:
            bad.append(f"pause {k + 1} {got:.3f} s < {least:.3f} s")
        elif k and got < grown:
            bad.append(f"pause {k + 1} {got:.3f} s not {GROWTH}x pause {k} {pauses[k - 1]:.3f} s")
    return bad


@suite.check(
    "sync.retry_after",
    tier="resilience",
    root="app.health",
    musts=("M-SYNC-5",),
    harm="ignored Retry-After: the client retries before the upstream asked it to",
)
def sync_retry_after(ev: Evidence) -> Outcome:
    """Every 503 with Retry-After the run shows (anywhere in the backoff page's run, more
    than once) is retried no sooner than it asked, counted from when the 503 left the mock
    (some take a while to arrive); a retry the SIGKILL cut is not charged."""
    page = ev.dataset.faults.backoff_page
    seen, bad = [], []
    left = ev.left_at()
    for life in lives_of(ev, page):
        for r, nxt in itertools.pairwise(life):
            if r["fault"] == "retry-after":
                gap = (nxt["t_ms"] - left.get(r["seq"], r["t_ms"])) / 1000.0
                seen.append(f"{gap:.3f} s (asked {r['retry_after']} s)")
                if gap < r["retry_after"] - TIMER_SLACK_S:
                    bad.append(seen[-1])
    if not seen and any(r["fault"] == "retry-after" for r in ev.page_requests(page)):
        return graded(1.0, f"page {page}: the SIGKILL came before the retry; not charged")
    if not seen:
        return absent(f"page {page}: no 503 with Retry-After was retried")
    return graded(
        0.0 if bad else 1.0,
        f"page {page}: retries after a Retry-After {', '.join(seen)}; too early: {bad}",
    )


@suite.check(
    "sync.waits_slow",
    tier="resilience",
    root="app.health",
    musts=("M-SYNC-6",),
    harm="fatal timeout: a slow upstream answer is abandoned or re-requested",
)
def sync_waits_slow(ev: Evidence) -> Outcome:
    """The slow page answers its first ask 503 after more than 7 s, and its retry 200
    after more than 7 s: a client may give up on either after 6 s (then ask again, one
    request at a time: ``sync.in_order``), never before, on a first ask or a retry. It
    gives up when it closes the connection (the mock's ``gave-up`` line) or asks again,
    whichever comes first."""
    page = ev.dataset.faults.slow_page
    asks = ev.page_requests(page)
    slows = [r for r in asks if r["fault"] in ("slow-503", "slow")]
    if not slows:
        return absent(f"the slow page {page} was never requested")
    shown, ok = [], True
    for slow in slows:
        life = life_of(slow["phase"])
        again = [r for r in asks if r["seq"] > slow["seq"] and life_of(r["phase"]) == life]
        gone = [
            r
            for r in ev.trace
            if r.get("mark") == "gave-up"
            and r.get("page", page) == page
            and r["seq"] > slow["seq"]
            and life_of(r["phase"]) == life
            and (not again or r["seq"] < again[0]["seq"])
        ]
        quits = [r["t_ms"] for r in (again[:1] + gone[:1])]
        waited = (min(quits) - slow["t_ms"]) / 1000.0 if quits else None
        ok = ok and (waited is None or waited >= TIMEOUT_S - GIVE_UP_SLACK_S)
        took = ev.slow_503_s if slow["fault"] == "slow-503" else ev.slow_s
        what = "waited for it" if waited is None else f"gave up after {waited:.3f} s"
        shown.append(f"{slow['fault']} ({took} s): {what}")
    later = [r for r in ev.requests() if r["seq"] > slows[-1]["seq"] and r["phase"] in LIVES]
    last_page = page == len(ev.dataset.pages) - 1
    went_on = last_page or any(r.get("page") == page + 1 for r in later)
    return graded(
        1.0 if ok and went_on else 0.0,
        f"slow page {page} (SPEC waits {TIMEOUT_S} s): {'; '.join(shown)}, continued: {went_on}",
    )
