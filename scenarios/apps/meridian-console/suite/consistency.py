"""Checks of tier X: the stored state against the truth (versions, replays, the money
ledger, exponents, days, the API's order, filters, the event table)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from harness.appkit.grading import holds
from harness.scoring import Outcome, absent

from .drive import DRAFTS
from .fixtures import money
from .grader import ck
from .readers import ids, need_listing, truth_order

# -- X: consistency ---------------------------------------------------------------------


def _versions(ev: Any, kinds: tuple[str, ...]) -> Outcome:
    if (miss := need_listing(ev)) is not None:
        return miss
    by = {str(i.get("id")): i for i in ev.listing or []}
    truth = ev.truth_at.get("listing") or ev.dataset.truth
    touched = sorted({e.payment_id for e in ev.dataset.events if e.kind in kinds})
    good = sum(
        1
        for pid in touched
        if pid in by and (by[pid].get("status"), by[pid].get("version")) == truth[pid]
    )
    return holds(good == len(touched), f"{good}/{len(touched)} payments at their highest version")


@ck(
    "cons.versions",
    "consistency",
    "stale state: webhooks applied by arrival, not by version",
    ("M-HOOK-3",),
)
def cons_versions(ev: Any) -> Outcome:
    if (miss := need_listing(ev)) is not None:
        return miss
    by = {str(i.get("id")): i for i in ev.listing or []}
    truth = ev.truth_at.get("listing") or ev.dataset.truth
    good = sum(
        1
        for pid, sv in truth.items()
        if pid in by and (by[pid].get("status"), by[pid].get("version")) == sv
    )
    return holds(
        good == len(truth), f"{good}/{len(truth)} payments with the vendor's status and version"
    )


@ck(
    "cons.early_events",
    "consistency",
    "stale state: an event before its page is lost",
    ("M-HOOK-3",),
)
def cons_early_events(ev: Any) -> Outcome:
    return _versions(ev, ("early",))


@ck(
    "cons.reordered",
    "consistency",
    "stale state: an older event overwrote a newer one",
    ("M-HOOK-3",),
)
def cons_reordered(ev: Any) -> Outcome:
    return _versions(ev, ("reordered",))


@ck(
    "cons.replay",
    "consistency",
    "double notifications: a replayed event applied again",
    ("M-HOOK-4",),
)
def cons_replay(ev: Any) -> Outcome:
    hooks = [r for r in ev.trace if r.get("kind") == "hook" and r.get("cls") == "replay"]
    events = ev.events
    if not hooks or events is None:
        return absent("no replay delivered or no events listed")
    per = Counter(
        (e.get("payment_id"), e.get("version"))
        for e in events
        if e.get("kind") == "payment.updated"
    )
    twice = [r["event"] for r in hooks if per.get((r["payment"], r["version"]), 0) != 1]
    answered = all(r.get("answer") in (200, 202) for r in hooks)
    return holds(
        answered and not twice,
        f"replays answered {[r.get('answer') for r in hooks]}; published twice {twice}",
    )


@ck(
    "cons.conservation",
    None,
    "money created or lost: summary sums differ from the payments",
    ("M-API-6",),
    critical=True,
    severity="money",
)
def cons_conservation(ev: Any) -> Outcome:
    s = ev.summary
    if not isinstance(s, dict) or not isinstance(s.get("currencies"), list):
        return absent("no summary")
    truth: dict[str, list[int]] = {}
    for p in ev.dataset.payments:
        t = truth.setdefault(p.currency, [0, 0])
        t[0] += 1
        t[1] += p.amount_minor
    got = {c.get("currency"): c for c in s["currencies"] if isinstance(c, dict)}
    residual = 0
    bad = []
    for cur, (n, total) in truth.items():
        c: Any = got.get(cur) or {}
        m = c.get("sum_minor") if type(c.get("sum_minor")) is int else 0
        residual += abs(m - total)
        if c.get("count") != n or m != total or c.get("sum") != money(total, cur):
            bad.append(cur)
    return holds(
        not bad and set(got) == set(truth),
        f"residual {residual} minor units; wrong currencies {bad}",
    )


@ck(
    "money.exponent",
    None,
    "wrong money: amounts not exact or not in the currency's exponent",
    ("M-MONEY-1",),
    critical=True,
    severity="money",
)
def money_exponent(ev: Any) -> Outcome:
    if (miss := need_listing(ev)) is not None:
        return miss
    by = ev.dataset.by_id
    bad = [
        i.get("id")
        for i in ev.listing or []
        if str(i.get("id")) in by
        and (
            type(i.get("amount_minor")) is not int
            or i.get("amount_minor") != by[str(i["id"])].amount_minor
            or i.get("amount") != by[str(i["id"])].amount
        )
    ]
    big = sum(1 for p in ev.dataset.payments if p.amount_minor > 2**53)
    return holds(
        not bad, f"{len(bad)} wrong amounts ({big} above 2^53 in the data); e.g. {bad[:2]}"
    )


@ck(
    "money.raw_json",
    "consistency",
    "float money: amount_minor not written as JSON integers",
    ("M-MONEY-1",),
)
def money_raw_json(ev: Any) -> Outcome:
    text = ev.listing_text
    if not text:
        return absent("no listing text")
    import re

    floats = re.findall(r'"amount_minor"\s*:\s*-?\d+\.\d+|"amount_minor"\s*:\s*-?\d+e', text)
    return holds(not floats, f"{len(floats)} non-integer amount_minor tokens")


@ck(
    "days.dst",
    None,
    "wrong books: counts per Berlin day wrong across DST",
    ("M-DAY-1",),
    critical=True,
    severity="data",
)
def days_dst(ev: Any) -> Outcome:
    s = ev.summary
    if not isinstance(s, dict) or not isinstance(s.get("days"), list):
        return absent("no summary")
    truth = Counter(p.day for p in ev.dataset.payments)
    got = {d.get("day"): d.get("count") for d in s["days"] if isinstance(d, dict)}
    bad = [d for d in truth if got.get(d) != truth[d]] + [d for d in got if d not in truth]
    return holds(not bad, f"{len(bad)} wrong days of {len(truth)}; e.g. {bad[:3]}")


@ck(
    "api.summary_order",
    "consistency",
    "confusing books: the summary's currencies or days out of order or repeated",
    ("M-API-6",),
)
def api_summary_order(ev: Any) -> Outcome:
    s = ev.summary
    if not isinstance(s, dict) or not all(
        isinstance(s.get(k), list) for k in ("currencies", "days")
    ):
        return absent("no summary")
    codes: list[Any] = [c.get("currency") for c in s["currencies"] if isinstance(c, dict)]
    days: list[Any] = [d.get("day") for d in s["days"] if isinstance(d, dict)]
    # SPEC 5.5: currencies sorted by code, days sorted, each once
    ok = (
        all(isinstance(c, str) for c in codes)
        and all(isinstance(d, str) for d in days)
        and codes == sorted(set(codes))
        and days == sorted(set(days))
    )
    return holds(ok, f"currencies {codes}; days {days[:2]}...{days[-2:]} ({len(days)})")


@ck("api.days", "consistency", "wrong days: items carry the wrong Berlin day", ("M-DAY-1",))
def api_days(ev: Any) -> Outcome:
    if (miss := need_listing(ev)) is not None:
        return miss
    by = ev.dataset.by_id
    bad = [
        i.get("id")
        for i in ev.listing or []
        if str(i.get("id")) in by and i.get("day") != by[str(i["id"])].day
    ]
    return holds(not bad, f"{len(bad)} wrong days")


@ck(
    "api.order",
    "consistency",
    "misread ledger: listing not ordered by created_at, id",
    ("M-API-4",),
)
def api_order(ev: Any) -> Outcome:
    if (miss := need_listing(ev)) is not None:
        return miss
    return holds(ids(ev.listing) == truth_order(ev), "listing order vs (created_at, id)")


@ck(
    "api.pagination", "consistency", "missing rows: pages of different sizes disagree", ("M-API-4",)
)
def api_pagination(ev: Any) -> Outcome:
    if (miss := need_listing(ev)) is not None:
        return miss
    ok = ids(ev.paged) == ids(ev.listing) and ev.paged_total == len(ev.listing or [])
    return holds(ok, f"per_page 97: {len(ev.paged or [])} items, total {ev.paged_total}")


@ck("api.filters", "consistency", "wrong reports: filters select the wrong payments", ("M-API-5",))
def api_filters(ev: Any) -> Outcome:
    if not ev.filters:
        return absent("no filters asked")
    truth = ev.truth_at.get("listing") or ev.dataset.truth
    order = ev.dataset.api_order()
    tests: dict[str, Callable[[Any], bool]] = {
        "currency": lambda p: p.currency == "CLF",
        "status": lambda p: truth[p.id][0] == "refunded",
        "dst": lambda p: p.day == "2026-03-29",
        "after-dst": lambda p: p.day == "2026-03-30",
        "combined": lambda p: p.currency == "EUR" and truth[p.id][0] == "settled",
        "day-currency": lambda p: p.day == "2026-04-11" and p.currency == "JPY",
    }
    bad = [n for n, t in tests.items() if ev.filters.get(n) != [p.id for p in order if t(p)]]
    # "total counts every item matching the filters" (SPEC 5.3), not every stored one
    miscounted = [
        n
        for n in tests
        if ev.filter_totals.get(n) != len(ev.filters.get(n) or []) and ev.filters.get(n) is not None
    ]
    return holds(not bad and not miscounted, f"wrong filters: {bad}; wrong totals: {miscounted}")


@ck("api.counterparty", "consistency", "altered names: counterparties not as the vendor sent them")
def api_counterparty(ev: Any) -> Outcome:
    if (miss := need_listing(ev)) is not None:
        return miss
    by = ev.dataset.by_id
    bad = [
        i.get("id")
        for i in ev.listing or []
        if str(i.get("id")) in by and i.get("counterparty") != by[str(i["id"])].counterparty
    ]
    return holds(not bad, f"{len(bad)} altered names")


@ck(
    "evt.sequence",
    "consistency",
    "broken feed: events not numbered 1, 2, 3 without gaps",
    ("M-EVT-1",),
)
def evt_sequence(ev: Any) -> Outcome:
    events = ev.events
    if not events:
        return absent("no events listed")
    seqs = [e.get("seq") for e in events]
    return holds(seqs == list(range(1, len(seqs) + 1)), f"{len(seqs)} events; first {seqs[:3]}")


@ck(
    "evt.exactly_once",
    "consistency",
    "wrong feed: changes published twice or not at all",
    ("M-EVT-1",),
)
def evt_exactly_once(ev: Any) -> Outcome:
    events = ev.events
    if events is None:
        return absent("no events listed")
    kinds = Counter(e.get("kind") for e in events)
    created = [e.get("draft_id") for e in events if e.get("kind") == "draft.created"]
    executed = [e.get("draft_id") for e in events if e.get("kind") == "draft.executed"]
    problems = _event_problems(ev, events)
    ok = (
        len(created) == len(set(created))
        and len(executed) == len(set(executed))
        and kinds.get("sync.completed", 0) >= 2
        and set(ev.drafts.values()) <= set(created)
        and not problems
    )
    return holds(ok, f"kinds {dict(kinds)}; {'; '.join(problems)[:300] or 'fields as the changes'}")


def _event_problems(ev: Any, events: list[dict[str, Any]]) -> list[str]:
    """What the event table (SPEC 5.7) says that did not happen, or says wrong."""
    out: list[str] = []
    updates = [
        (str(e.get("payment_id")), e.get("version"))
        for e in events
        if e.get("kind") == "payment.updated"
    ]
    twice = [k for k, n in Counter(updates).items() if n > 1]
    if twice:
        out.append(f"payment.updated twice for {twice[:2]}")
    # webhooks that changed nothing: refused ones, and the older of a reordered pair
    refused = {
        (str(r.get("payment")), r.get("version"))
        for r in ev.trace
        if r.get("kind") == "hook" and r.get("cls") in ("forged", "stale", "future")
    }
    pairs: dict[str, list[int]] = {}
    for e in ev.dataset.events:
        if e.kind == "reordered":
            pairs.setdefault(e.payment_id, []).append(e.version)
    older = {(pid, v) for pid, vs in pairs.items() for v in vs if v < max(vs)}
    phantom = sorted(k for k in set(updates) if k in refused or k in older)
    if phantom:
        out.append(f"payment.updated for webhooks that changed nothing: {phantom[:2]}")
    # every executed draft: one draft.executed naming its vendor payment
    drafts = ((ev.cold or {}).get("drafts") or {}).get("items") or []
    said = {
        e.get("draft_id"): e.get("vendor_payment_id")
        for e in events
        if e.get("kind") == "draft.executed"
    }
    unsaid = [
        d.get("id")
        for d in drafts
        if isinstance(d, dict)
        and d.get("state") == "executed"
        and said.get(d.get("id")) != d.get("vendor_payment_id")
    ]
    if unsaid:
        out.append(f"executed drafts without their draft.executed: {unsaid[:2]}")
    # draft.created carries the draft's money string, currency and counterparty
    made = {e.get("draft_id"): e for e in events if e.get("kind") == "draft.created"}
    for tag, did in ev.drafts.items():
        body = DRAFTS[tag][1]
        want = (
            money(body["amount_minor"], body["currency"]),
            body["currency"],
            body["counterparty"],
        )
        e = made.get(did) or {}
        if (e.get("amount"), e.get("currency"), e.get("counterparty")) != want:
            out.append(f"draft.created of {tag}: {e.get('amount')!r} {e.get('currency')!r}")
    return out
