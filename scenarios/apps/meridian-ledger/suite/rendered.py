"""Checks of the rendered console (what a user sees): amounts, visibility, order,
escaping, the drafts table, Berlin times, totals, the vendor-down banner, a clean page."""

from __future__ import annotations

from collections import Counter
from typing import Any

from harness.appkit import grading
from harness.scoring import Outcome, absent, fraction, graded, unavailable

from .bounds import CONSOLE_PAGE
from .check_helpers import _draft_rows, _drafts_truth, _payment_rows
from .evidence import Evidence
from .grader import suite
from .vendor_model import EXPONENTS, MARKUP_NAMES, berlin_minute, format_minor


@suite.check(
    "money.exponent",
    musts=("M-MONEY-1",),
    critical=True,
    severity="money",
    root="app.boots",
    harm="wrong money: an amount shown with the wrong exponent or digits (JPY 0, KWD 3, 2**53+)",
)
def money_exponent(ev: Evidence) -> Outcome:
    rows, why = _payment_rows(ev)
    if rows is None:
        return why  # type: ignore[return-value]
    by_id = ev.dataset.by_id
    mine = [r for r in rows if len(r["cells"]) >= 5]
    totals = [
        r
        for look in ev.console.values()
        if isinstance(look, dict)
        for r in look.get("rows", [])
        if str(r.get("id", "")).startswith("total-")
    ][:4]
    if not mine:
        return absent("no payment rows with 5 cells on the console")
    # an amount counts only when its cell is entirely shown (not clipped, not covered)
    bad = [r for r in mine if r["cells"][4] != by_id[r["id"]].amount or not _shown(r, 4)]
    want = _total_amounts(ev)
    bad_totals = [
        r
        for r in totals
        if len(r["cells"]) < 3 or r["cells"][2] != want.get(r["id"][6:]) or not _shown(r, 2)
    ]
    drafts = _drafts_truth(ev)
    draft_rows = _draft_rows(ev)
    bad_drafts = [
        r
        for r in draft_rows
        if len(r["cells"]) < 4
        or r["cells"][3] != _draft_amount(drafts[r["id"]])
        or not _shown(r, 3)
    ]
    n = len(mine) + len(totals) + len(drafts)
    sample = [
        f"{by_id[r['id']].currency} {r['cells'][4]}!={by_id[r['id']].amount}" for r in bad[:2]
    ]
    sample += [f"{r['id']} {r['cells'][2:3]}!={want.get(r['id'][6:])}" for r in bad_totals[:2]]
    sample += [f"{r['id']} {r['cells'][3:4]}" for r in bad_drafts[:2]]
    good = n - len(bad) - len(bad_totals) - len(drafts) + len(draft_rows) - len(bad_drafts)
    return grading.strict(
        good, n, f"amounts right on the console (payments, totals, drafts); wrong {sample}"
    )


def _shown(row: dict[str, Any], cell: int) -> bool:
    shown = row.get("shown") or []
    return cell < len(shown) and bool(shown[cell])


def _draft_amount(draft: dict[str, Any]) -> str:
    return str(format_minor(int(draft["amount_minor"]), EXPONENTS[draft["currency"]]))


def _total_amounts(ev: Evidence) -> dict[str, str]:
    sums: dict[str, int] = {}
    for p in ev.dataset.payments:
        sums[p.currency] = sums.get(p.currency, 0) + p.amount_minor
    return {c: format_minor(s, EXPONENTS[c]) for c, s in sums.items()}


@suite.check(
    "console.data_visible",
    musts=("M-UI-9",),
    critical=True,
    severity="view",
    root="app.boots",
    harm="empty console: stored payments are not visible to the user (absent, hidden or covered)",
)
def console_data_visible(ev: Evidence) -> Outcome:
    rows, why = _payment_rows(ev)
    if rows is None:
        return why  # type: ignore[return-value]
    want = [p.id for p in ev.dataset.api_order()][:CONSOLE_PAGE]
    page1 = {r["id"] for r in ev.console.get("page1", {}).get("rows", [])}
    missing = [i for i in want if i not in page1]
    every = [
        r
        for key, look in ev.console.items()
        if key.startswith("page")
        for r in look.get("rows", [])
    ]
    hidden = [
        f"{r['id']} ({','.join(w for w in r.get('why', []) if w)})"
        for r in every
        if not r.get("visible")
    ]
    # one row hidden, clipped or covered is data a user cannot read: all or nothing
    return graded(
        0.0 if missing or hidden else 1.0,
        f"{len(every)} rows on {len(ev.console) - 1} pages; page 1 lacks {len(missing)}; "
        f"not entirely visible {hidden[:3]}",
        ev.console.get("page1", {}).get("shot"),
    )


@suite.check(
    "ui.order",
    musts=("M-UI-6",),
    tier="rendered",
    root="app.boots",
    harm="misleading console: rows not in the SPEC's order",
)
def ui_order(ev: Evidence) -> Outcome:
    rows, why = _payment_rows(ev)
    if rows is None:
        return why  # type: ignore[return-value]
    order = [p.id for p in ev.dataset.api_order()]
    good = total = 0
    for key, look in ev.console.items():
        if not key.startswith("page"):
            continue
        page = int(key[4:])
        want = order[(page - 1) * CONSOLE_PAGE : page * CONSOLE_PAGE]
        got = [r["id"] for r in look["rows"] if str(r.get("id")) in ev.dataset.by_id]
        total += len(want)
        good += sum(1 for i, pid in enumerate(want) if i < len(got) and got[i] == pid)
    return grading.strict(good, total, "console rows at their SPEC position")


@suite.check(
    "ui.escaped",
    musts=("M-UI-7",),
    tier="rendered",
    root="app.boots",
    harm="markup injection: counterparty names are interpreted as HTML",
)
def ui_escaped(ev: Evidence) -> Outcome:
    rows, why = _payment_rows(ev)
    if rows is None:
        return why  # type: ignore[return-value]
    by_id = ev.dataset.by_id
    marked = [r for r in rows if by_id[r["id"]].counterparty in MARKUP_NAMES]
    if len(marked) < len(MARKUP_NAMES):
        return graded(0.0, f"{len(marked)} of {len(MARKUP_NAMES)} markup names on the console")
    ok = [
        r for r in marked if len(r["cells"]) >= 3 and r["cells"][2] == by_id[r["id"]].counterparty
    ]
    drafts = _drafts_truth(ev)
    draft_ok = [
        r
        for r in _draft_rows(ev)
        if len(r["cells"]) >= 2 and r["cells"][1] == drafts[r["id"]]["counterparty"]
    ]
    # one name rendered as markup is an injection: all or nothing
    return grading.strict(
        len(ok) + len(draft_ok),
        len(marked) + len(drafts),
        f"{len(ok)}/{len(marked)} markup names literal in payments, "
        f"{len(draft_ok)}/{len(drafts)} drafts' counterparties literal",
    )


@suite.check(
    "ui.drafts",
    tier="rendered",
    root="app.boots",
    musts=("M-UI-4",),
    harm="blind checker: the drafts table lacks a draft or shows it without its cells",
)
def ui_drafts(ev: Evidence) -> Outcome:
    if ev.probe_error:
        return unavailable(f"no browser: {ev.probe_error}")
    drafts = _drafts_truth(ev)
    if not drafts:
        return graded(0.0, "no draft could be created")
    rows = {r["id"]: r for r in _draft_rows(ev)}

    def ok(ident: str) -> bool:
        cells = rows[ident]["cells"] if ident in rows else []
        return (
            len(cells) == 6
            and cells[0] == ident
            and cells[2] == drafts[ident]["currency"]
            and cells[4] == "pending_approval"
        )

    return grading.each(
        list(drafts), ok, "drafts rows: id, counterparty, currency, amount, state, action", str
    )


@suite.check(
    "ui.berlin_time",
    musts=("M-TIME-1",),
    tier="rendered",
    root="app.boots",
    harm="wrong times: creation shown in UTC or a fixed offset, not Berlin local time",
)
def ui_berlin_time(ev: Evidence) -> Outcome:
    rows, why = _payment_rows(ev)
    if rows is None:
        return why  # type: ignore[return-value]
    by_id = ev.dataset.by_id
    mine = [r for r in rows if len(r["cells"]) >= 2]
    if not mine:
        return absent("no payment rows on the console")
    ok = [r for r in mine if r["cells"][1] == berlin_minute(by_id[r["id"]].created_at)]
    return grading.strict(len(ok), len(mine), "created cells in Berlin local time")


@suite.check(
    "ui.totals",
    musts=("M-UI-3",),
    tier="rendered",
    root="app.boots",
    harm="wrong totals: the console's per-currency counts disagree with the ledger",
)
def ui_totals(ev: Evidence) -> Outcome:
    if ev.probe_error:
        return unavailable(f"no browser: {ev.probe_error}")
    rows = [
        r
        for r in ev.console.get("page1", {}).get("rows", [])
        if str(r.get("id", "")).startswith("total-")
    ]
    counts = Counter(p.currency for p in ev.dataset.payments)
    ok = [
        r
        for r in rows
        if len(r["cells"]) >= 2
        and r["cells"][0] == r["id"][6:]
        and r["cells"][1] == str(counts.get(r["id"][6:]))
    ]
    return grading.strict(
        len(ok), len(counts), f"totals rows with the right currency and count ({len(rows)} rows)"
    )


@suite.check(
    "ui.down_banner",
    musts=("M-UI-1",),
    tier="rendered",
    root="app.boots",
    harm="hidden outage: no visible vendor-down state, or it covers the data",
)
def ui_down_banner(ev: Evidence) -> Outcome:
    if ev.probe_error:
        return unavailable(f"no browser: {ev.probe_error}")
    look = ev.down_console
    if not look:
        return absent(f"the vendor-down console was not reached ({ev.down_error})")
    rows = [r for r in look.get("rows", []) if str(r.get("id")) in ev.dataset.by_id]
    visible = sum(1 for r in rows if r.get("visible"))
    text = str(look.get("banner_text", "")).lower()
    steps = {
        "banner visible": bool(look.get("banner")) and "unavailable" in text,
        "rows still visible": bool(rows) and visible == len(rows),
    }
    ok = [k for k, v in steps.items() if v]
    return fraction(
        len(ok), len(steps), f"{steps}; {visible}/{len(rows)} rows on top", look.get("shot")
    )


@suite.check(
    "ui.console_clean",
    musts=("M-UI-8",),
    tier="rendered",
    root="app.boots",
    harm="broken page: script errors or a wrong Content-Type",
)
def ui_console_clean(ev: Evidence) -> Outcome:
    if ev.probe_error:
        return unavailable(f"no browser: {ev.probe_error}")
    look = ev.console.get("page1")
    if not look:
        return absent("the console was not reached")
    ctype = str(look.get("ctype") or "").replace(" ", "").lower()
    errors = ev.console.get("errors", [])
    ok = int(ctype == "text/html;charset=utf-8") + int(not errors)
    return fraction(ok, 2, f"Content-Type {ctype!r}; console errors {errors[:2]}")
