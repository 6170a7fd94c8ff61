"""Checks of tier B: the walk as the vendor's trace shows it (key, order, backoff, outage,
Retry-After, the slow page, ETags, idempotency keys)."""

from __future__ import annotations

from typing import Any

from harness.appkit.grading import first_pause_ok, growth_failures, holds
from harness.scoring import Outcome, absent

from .fixtures import ERRORS_IN_A_ROW, OUTAGE_S, PAGES, RESYNC_SLOW_S, RETRY_AFTER_S, SLOW_S
from .grader import ck
from .readers import PACE_SLACK_S, page_requests, pauses

# -- B: wire (from the vendor's trace) ----------------------------------------------------


@ck("wire.auth", "wire", "rejected calls: vendor requests without the API key", ("M-SYNC-1",))
def wire_auth(ev: Any) -> Outcome:
    reqs = [
        r
        for r in ev.trace
        if r.get("kind") in ("page", "create")
        and not r.get("outage")
        and r["phase"] not in ("offline", "vendor-down")
    ]
    if not reqs:
        return absent("the vendor was never called")
    bad = [r for r in reqs if not r.get("auth")]
    return holds(not bad, f"{len(reqs) - len(bad)}/{len(reqs)} requests carried the key")


@ck("wire.sequential", "wire", "rate-limited vendor: pages fetched concurrently", ("M-SYNC-2",))
def wire_sequential(ev: Any) -> Outcome:
    reqs = ev.pages("initial-sync", "after-respawn", "resync")
    if not reqs:
        return absent("no page requests")
    over = [r for r in reqs if r.get("inflight", 1) > 1]
    return holds(not over, f"{len(over)} of {len(reqs)} page requests overlapped another")


@ck(
    "wire.cursor_order",
    "wire",
    "corrupt walk: pages asked out of the cursor chain's order",
    ("M-SYNC-2",),
)
def wire_cursor_order(ev: Any) -> Outcome:
    reqs = ev.walk()
    if not reqs:
        return absent("no page requests")

    def out_of_order(rs: list[dict[str, Any]]) -> int:
        pages = [r.get("page") for r in rs]
        return sum(
            1
            for a, b in zip(pages, pages[1:], strict=False)  # noqa: RUF007  (zip kept: a calibrated expression)
            if b is None or a is None or b not in (a, a + 1)
        )

    bad = out_of_order(reqs)
    # the respawn resumes at the stored cursor: one step back to the held page is allowed
    respawn = [r for r in reqs if r["phase"] == "after-respawn"]
    allowed = 1 if respawn else 0
    # the second walk (POST /api/sync) follows the cursors too, from the first page
    again = ev.pages("resync")
    bad_again = out_of_order(again) + (1 if again and again[0].get("page") != 0 else 0)
    return holds(
        bad <= allowed and bad_again == 0,
        f"{bad} out-of-order steps (allowed {allowed}); second walk: {bad_again}",
    )


@ck("wire.dropped", "wire", "hammered vendor: a dropped connection retried at once", ("M-SYNC-3",))
def wire_dropped(ev: Any) -> Outcome:
    asks = page_requests(ev, ev.dataset.faults.drop_page)
    p = pauses(asks)
    if not p:
        return absent("the dropped page was never retried")
    return holds(first_pause_ok(p, 0.2), f"retry after {p[0]:.3f} s (SPEC >= 0.2 s)")


@ck("wire.backoff_first", "wire", "hammered vendor: a 5xx retried sooner than 0.2 s", ("M-SYNC-3",))
def wire_backoff_first(ev: Any) -> Outcome:
    p = pauses(page_requests(ev, ev.dataset.faults.error_page))
    if not p:
        return absent("the failing page was never retried")
    return holds(first_pause_ok(p, 0.2), f"first retry after {p[0]:.3f} s (SPEC >= 0.2 s)")


def schedule_failures(p: list[float], first: bool = True) -> list[str]:
    """How the pauses ``p`` miss SPEC 3.2's schedule: 0.2 s first (``first``), then each at
    least twice the previous measured pause less the latency it may carry, capped at 2 s
    (``appkit.grading``); growth starts from what the first pause was."""
    early = [] if not first or first_pause_ok(p, 0.2) else [f"first pause {p[0]:.3f} s < 0.2 s"]
    return early + growth_failures(p, 2.0, min(p[0], 0.2), 2.0)


@ck("wire.backoff_growth", "wire", "hammered vendor: the pause does not double", ("M-SYNC-4",))
def wire_backoff_growth(ev: Any) -> Outcome:
    asks = page_requests(ev, ev.dataset.faults.error_page)
    p = pauses(asks)
    if len(p) < ERRORS_IN_A_ROW:
        return absent(f"{len(p)} retries of the 3x503 page")
    # each pause: the SPEC's schedule (0.2, 0.4, 0.8 s: latency only adds) and at least
    # twice the previous measured pause, less the latency it may carry (appkit.grading;
    # the first pause's own bound is M-SYNC-3's: growth starts from what it was)
    bad = schedule_failures(p, first=False)
    return holds(
        not bad, f"pauses {[round(x, 3) for x in p]} (each 2x the previous, cap 2 s): {bad}"
    )


@ck(
    "wire.outage_cap", "wire", "idle sync: after an outage the client waits too long", ("M-SYNC-5",)
)
def wire_outage_cap(ev: Any) -> Outcome:
    page = ev.dataset.faults.outage_page
    asks = page_requests(ev, page)
    resets = [r for r in asks if r.get("outage")]
    okay = [r for r in asks if r.get("status") in (200, 304)]
    if not resets or not okay:
        return absent("the outage page was not retried to success")
    end = resets[0]["t_ms"] + OUTAGE_S * 1000
    late = (okay[0]["t_ms"] - end) / 1000.0
    gaps = [
        b - a
        for a, b in zip([r["t_ms"] for r in asks], [r["t_ms"] for r in asks][1:], strict=False)
    ]
    worst = max(gaps) / 1000.0 if gaps else 0.0
    # SPEC: no wait above 2 s plus the attempt's own time (a reset takes milliseconds)
    return holds(
        late <= 2.5 and worst <= 2.0 + PACE_SLACK_S,
        f"asked again {late:.2f} s after the outage ended; longest pause {worst:.2f} s "
        f"(SPEC: 2 s plus the attempt)",
    )


@ck(
    "wire.create_backoff",
    "wire",
    "hammered vendor: a failing creation retried without the backoff",
    ("M-SYNC-3", "M-SYNC-4"),
)
def wire_create_backoff(ev: Any) -> Outcome:
    """A creation is a vendor request like a page (SPEC 3.2): while the vendor is down,
    the failed approval's retries wait 0.2 s first, then twice as long each time."""
    tries: dict[str, list[float]] = {}
    for r in ev.trace:
        if r.get("kind") == "create" and r.get("phase") == "vendor-down":
            tries.setdefault(str(r.get("key")), []).append(float(r["t_ms"]))
    if not tries:
        return absent("no creation was tried while the vendor was down")
    times = max(tries.values(), key=len)
    p = [(b - a) / 1000.0 for a, b in zip(times, times[1:], strict=False)]  # noqa: RUF007  (zip kept: a calibrated expression)
    if not p:
        return holds(False, "the failed creation was never retried")
    bad = schedule_failures(p)
    return holds(not bad, f"pauses {[round(x, 3) for x in p]}: {bad[:3]}")


@ck(
    "wire.outage_growth",
    "wire",
    "hammered vendor: connection errors retried without a growing pause",
    ("M-SYNC-3", "M-SYNC-4"),
)
def wire_outage_growth(ev: Any) -> Outcome:
    """A connection that cannot be opened is transient like a 5xx (SPEC 3.2 rule 2): the
    outage page's retries follow the same schedule, from 0.2 s doubling to 2 s."""
    p = pauses(page_requests(ev, ev.dataset.faults.outage_page))
    if len(p) < 3:
        return absent(f"{len(p)} retries of the outage page")
    bad = schedule_failures(p)
    return holds(not bad, f"pauses {[round(x, 3) for x in p]} (0.2 s, each 2x, cap 2 s): {bad[:3]}")


@ck("wire.retry_after", "wire", "ban risk: Retry-After not honoured", ("M-SYNC-6",))
def wire_retry_after(ev: Any) -> Outcome:
    reqs = [r for r in ev.trace if r.get("kind") in ("page", "create")]
    rate = [r for r in reqs if r.get("status") == 429]
    if not rate:
        return absent("the 429 was never served")
    after = [r for r in reqs if r["seq"] > rate[0]["seq"]]
    if not after:
        return absent("nothing asked after the 429")
    gap = (after[0]["t_ms"] - rate[0]["t_ms"]) / 1000.0
    return holds(
        gap >= RETRY_AFTER_S - 0.05,
        f"next request {gap:.2f} s after the 429 (Retry-After {RETRY_AFTER_S})",
    )


@ck("wire.slow", "wire", "doubled load: a slow page re-asked before it answered", ("M-SYNC-7",))
def wire_slow(ev: Any) -> Outcome:
    asks = page_requests(ev, ev.dataset.faults.slow_page)
    if not asks:
        return absent("the slow page was never asked")
    again = [r for r in ev.pages("resync") if r.get("page") == ev.dataset.faults.slow_page]
    return holds(
        len(asks) == 1
        and asks[0].get("status") == 200
        and len(again) == 1
        and again[0].get("status") in (200, 304),
        f"{len(asks)} requests for the slow page ({SLOW_S} s), {len(again)} in the second "
        f"walk ({RESYNC_SLOW_S} s); SPEC timeout >= 7 s",
    )


@ck("wire.etag", "wire", "wasted bandwidth: the second walk is not conditional", ("M-SYNC-10",))
def wire_etag(ev: Any) -> Outcome:
    reqs = ev.pages("resync")
    if not reqs:
        return absent("no second walk reached the vendor")
    ok = [r for r in reqs if r.get("status") in (200, 304)]
    conditional = [r for r in ok if r.get("inm")]
    n304 = sum(1 for r in ok if r.get("status") == 304)
    want = PAGES - len(ev.dataset.faults.resync_pages)
    return holds(
        len(conditional) == len(ok) == PAGES and n304 == want,
        f"{len(conditional)}/{len(ok)} conditional, {n304} x 304 (want {want})",
    )


@ck(
    "wire.idempotency",
    "wire",
    "double payment risk: creations without one stable key per draft",
    ("M-PAY-3",),
)
def wire_idempotency(ev: Any) -> Outcome:
    creates = [r for r in ev.trace if r.get("kind") == "create" and r.get("key")]
    if not creates:
        return absent("no payment was created")
    keys_by_ref: dict[str, set[str]] = {}
    refs_by_key: dict[str, set[str]] = {}
    for r in creates:
        keys_by_ref.setdefault(str(r.get("reference")), set()).add(r["key"])
        refs_by_key.setdefault(r["key"], set()).add(str(r.get("reference")))
    multi = [k for k, v in keys_by_ref.items() if len(v) > 1]
    shared = [k for k, v in refs_by_key.items() if len(v) > 1]
    return holds(
        not multi and not shared,
        f"{len(keys_by_ref)} drafts; several keys for {multi}; keys shared: {len(shared)}",
    )
