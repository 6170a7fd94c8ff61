"""Checks of consistency: the summary's money and Berlin days, webhook versions, and the
API's order, pagination, filters and amounts."""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Any

from harness.appkit import grading
from harness.scoring import Outcome, absent, fraction

from .check_helpers import _ids, _no_listing, _strict
from .evidence import Evidence
from .grader import suite


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
