"""Checks of tier V: what the console renders is the truth (order, money, escaping,
Berlin time, cells, the banner, the feed, the field's pixels)."""

from __future__ import annotations

from typing import Any

from harness.appkit.grading import holds
from harness.scoring import Outcome

from .drive import DRAFTS
from .fixtures import CURRENCIES, MARKUP_NAMES, Payment, berlin_minute, money
from .grader import ck
from .readers import STATUS_RGB, _expected_rows, _pages, close, ids, main, no_browser, rows_of

PLANE_RGB = (0x0B, 0x1E, 0x2D)


# -- V: rendered truth ------------------------------------------------------------------


@ck(
    "ui.order",
    "rendered",
    "misread ledger: rows not in the API's order",
    ("M-UI-3",),
    root="console.data_visible",
)
def ui_order(ev: Any) -> Outcome:
    pages = _pages(ev)
    if not pages:
        return no_browser(ev, "console pages")
    bad = [
        n
        for n, look in pages.items()
        if [r.get("id") for r in rows_of(look)] != ids(_expected_rows(ev, n))
    ]
    return holds(not bad, f"pages out of order: {bad} of {sorted(pages)}")


def _cells_match(ev: Any, col: int, expect: Any) -> tuple[int, int, list[str]]:
    good = total = 0
    wrong: list[str] = []
    by = {str(i.get("id")): i for i in ev.listing or []}
    truth = ev.dataset.by_id
    for look in _pages(ev).values():
        for r in rows_of(look):
            p = truth.get(str(r.get("id")))
            cells = r.get("cells") or []
            if p is None or len(cells) <= col:
                total += 1
                wrong.append(str(r.get("id")))
                continue
            total += 1
            if cells[col] == expect(p, by.get(p.id, {})):
                good += 1
            else:
                wrong.append(f"{cells[col]!r}")
    return good, total, wrong


@ck(
    "ui.money_exact",
    None,
    "wrong money on screen: amounts or sums not exact",
    ("M-UI-5",),
    critical=True,
    severity="money",
    root="console.data_visible",
)
def ui_money_exact(ev: Any) -> Outcome:
    good, total, wrong = _cells_match(ev, 4, lambda p, _i: p.amount)
    totals = main(ev).get("totals") or []
    want = {
        c: money(sum(p.amount_minor for p in ev.dataset.payments if p.currency == c), c)
        for c in CURRENCIES
    }
    t_bad = [
        r
        for r in totals
        if (r.get("cells") or [None] * 3)[2:3] != [want.get(r.get("currency") or "")]
        or not r.get("visible")
        or any(r.get("clipped") or [])
    ]
    ok = total > 0 and good == total and len(totals) == len(CURRENCIES) and not t_bad
    return holds(
        ok,
        f"{good}/{total} amount cells exact; totals wrong {len(t_bad)}/{len(totals)}; e.g. {wrong[:2]}",  # noqa: E501  (a calibrated string, kept as it was scored)
    )


@ck(
    "ui.escaped",
    "rendered",
    "injected markup: text rendered as HTML",
    ("M-UI-2",),
    root="console.data_visible",
)
def ui_escaped(ev: Any) -> Outcome:
    good, total, wrong = _cells_match(ev, 2, lambda p, _i: p.counterparty)
    marked = [
        r
        for look in _pages(ev).values()
        for r in rows_of(look)
        if (
            ev.dataset.by_id.get(str(r.get("id"))) or Payment("", 0, "EUR", "", "", "", 0)
        ).counterparty
        in MARKUP_NAMES
    ]
    return holds(
        good == total and bool(marked),
        f"{good}/{total} counterparties literal ({len(marked)} with markup); {wrong[:2]}",
    )


@ck(
    "ui.drafts_escaped",
    "rendered",
    "injected markup: a maker's text runs in the checker's console",
    ("M-UI-2",),
    root="console.data_visible",
)
def ui_drafts_escaped(ev: Any) -> Outcome:
    rows = main(ev).get("drafts_rows")
    if rows is None:
        return no_browser(ev, "drafts table")
    want = {ev.drafts[t]: DRAFTS[t][1]["counterparty"] for t in ev.drafts}
    seen = {r.get("id"): (r.get("cells") or [""])[0] for r in rows}
    bad = [d for d, cp in want.items() if seen.get(d) != cp]
    return holds(not bad, f"drafts not literal or missing: {bad}")


@ck(
    "ui.feed_escaped",
    "rendered",
    "injected markup: notifications rendered as HTML",
    ("M-UI-2",),
    root="console.data_visible",
)
def ui_feed_escaped(ev: Any) -> Outcome:
    feed = main(ev).get("feed_rows")
    if feed is None:
        return no_browser(ev, "feed")
    name = DRAFTS["a"][1]["counterparty"]
    hit = [f for f in feed if name in (f.get("text") or "")]
    return holds(bool(hit), f"the draft.created of {name!r} shown literally: {len(hit)}")


@ck(
    "ui.pick_escaped",
    "rendered",
    "injected markup in the pick panel",
    ("M-UI-2",),
    root="field.instanced",
)
def ui_pick_escaped(ev: Any) -> Outcome:
    picks = (main(ev).get("field") or {}).get("picks") or []
    special = [p for p in picks if (p.get("item") or {}).get("counterparty") in MARKUP_NAMES]
    if not special:
        return no_browser(ev, "pick of a markup name")
    p = special[0]
    item = p["item"]
    ok = (
        p.get("took") is not None
        and item["counterparty"] in p.get("text", "")
        and item["amount"] in p.get("text", "")
    )
    return holds(ok, f"#pick text {p.get('text')!r}"[:200])


@ck(
    "ui.berlin_time",
    "rendered",
    "wrong times: created not shown in Berlin time",
    ("M-UI-4",),
    root="console.data_visible",
)
def ui_berlin_time(ev: Any) -> Outcome:
    good, total, wrong = _cells_match(ev, 0, lambda p, _i: berlin_minute(p.created_at))
    return holds(
        total > 0 and good == total, f"{good}/{total} created cells in Berlin time; {wrong[:2]}"
    )


@ck(
    "ui.row_cells",
    "rendered",
    "wrong rows on screen: currency, status or note cells not what the ledger holds",
    ("M-UI-3",),
    root="console.data_visible",
)
def ui_row_cells(ev: Any) -> Outcome:
    """Cells 3, 5 and 6 (currency, status, note; SPEC 6.1) against the dataset's currency
    and the API's status and note read just before the pages were."""
    api = {str(i.get("id")): i for i in ev.listing_pages or ev.listing or []}

    def said(pid: str, key: str) -> str:
        value = (api.get(pid) or {}).get(key)
        return "" if value is None else str(value)

    wrong: list[str] = []
    total = 0
    for col, name, expect in (
        (3, "currency", lambda p: p.currency),
        (5, "status", lambda p: said(p.id, "status")),
        (6, "note", lambda p: said(p.id, "note")),
    ):
        good, seen, bad = _cells_match(ev, col, lambda p, _i, f=expect: f(p))
        total += seen
        if good != seen:
            wrong.append(f"{name} {seen - good}/{seen} wrong, e.g. {bad[:2]}")
    return holds(total > 0 and not wrong, "; ".join(wrong) or f"{total} cells as the ledger holds")


@ck("ui.day_cells", "rendered", "wrong days on screen", ("M-DAY-1",), root="console.data_visible")
def ui_day_cells(ev: Any) -> Outcome:
    good, total, wrong = _cells_match(ev, 1, lambda p, _i: p.day)
    return holds(total > 0 and good == total, f"{good}/{total} day cells; {wrong[:2]}")


@ck("ui.vendor_down", "rendered", "silent outage: no banner while the vendor is down", ("M-UI-8",))
def ui_vendor_down(ev: Any) -> Outcome:
    e = ev.browser.get("errors")
    if not e:
        return no_browser(ev, "vendor-down journey")
    rows = e.get("rows_vendor_down") or []
    visible = len(rows) >= 100 and all(r.get("visible") for r in rows)
    return holds(
        e.get("banner_s") is not None and visible,
        f"banner after {e.get('banner_s')} s: {e.get('banner')}; rows visible {visible}",
    )


@ck("ui.feed_order", "rendered", "confusing feed: not newest first or without seq", ("M-UI-9",))
def ui_feed_order(ev: Any) -> Outcome:
    feed = main(ev).get("feed_after")
    if not feed:
        return no_browser(ev, "feed")
    seqs = [int(f["seq"]) for f in feed if str(f.get("seq") or "").isdigit()]
    # the 50 most recent, newest first: from the newest (the approval's draft.executed,
    # awaited in the feed just before, or later) down without a gap, 50 once there are
    newest = ((main(ev).get("approve") or {}).get("event_seq")) or 0
    ok = (
        len(seqs) == len(feed)
        and bool(seqs)
        and seqs == sorted(seqs, reverse=True)
        and seqs[0] >= newest
        and seqs == list(range(seqs[0], seqs[0] - len(seqs), -1))
        and len(feed) == min(50, seqs[0])
    )
    return holds(ok, f"{len(feed)} items, seqs {seqs[:3]}...{seqs[-2:]} (newest event {newest})")


@ck(
    "field.pixels",
    "rendered",
    "misleading field: columns not where or not the colour they must be",
    ("M-GL-2",),
    root="field.instanced",
)
def field_pixels(ev: Any) -> Outcome:
    f = main(ev).get("field") or {}
    cells = f.get("cells")
    if not cells:
        return no_browser(ev, "field pixels")
    bad = [(i, s, px) for i, s, px in cells if not close(px, STATUS_RGB.get(str(s), (0, 0, 0)))]
    return holds(
        not bad,
        f"{len(cells) - len(bad)}/{len(cells)} cell centres in their status colour; e.g. {bad[:2]}",
    )


@ck(
    "field.gaps",
    "rendered",
    "smeared field: columns bleed into their neighbours",
    ("M-GL-2",),
    root="field.instanced",
)
def field_gaps(ev: Any) -> Outcome:
    gaps = (main(ev).get("field") or {}).get("gaps")
    if not gaps:
        return no_browser(ev, "field pixels")
    bad = [px for px in gaps if not close(px, PLANE_RGB)]
    return holds(not bad, f"{len(gaps) - len(bad)}/{len(gaps)} gaps show the plane; e.g. {bad[:2]}")
