"""Checks of the page: content type, rows, visibility mid-sync and at the end, escaping, console."""

from typing import Any

from harness.appkit.fixtures import (
    MARKUP_NAMES,
)
from harness.appkit.grading import (
    each,
    strict,
)
from harness.appkit.rendered import hidden_reason
from harness.scoring import Outcome, absent, graded

from .evidence import Evidence, expected_rows, page_rows, why
from .grader import suite
from .schedule import shown


@suite.check(
    "ui.rows_visible",
    critical=True,
    severity="view",
    root="app.health",
    musts=("M-UI-3",),
    harm="hidden invoices: a stored invoice is not entirely visible (hidden, clipped, covered)",
)
def ui_rows_visible(ev: Evidence) -> Outcome:
    rows, why = page_rows(ev)
    if rows is None:
        return why
    stored = [i for i in dict.fromkeys(ev.ids(ev.listing))]
    if not stored:
        return absent("nothing stored, nothing to show")
    by_id: dict[str, dict[str, Any]] = {}
    for r in rows:
        if r.get("visible") or r.get("id") not in by_id:
            by_id[str(r.get("id"))] = r
    shown = each(
        stored,
        lambda i: bool(by_id.get(i, {}).get("visible")),
        "stored invoices entirely visible",
        lambda i: f"{i} ({hidden_reason(by_id[i]) if i in by_id else 'no row'})",
    )
    assert ev.probe is not None
    return shown.model_copy(update={"evidence": [str(ev.probe.screenshot or "")]})


@suite.check(
    "ui.content_type",
    tier="ui",
    root="app.health",
    musts=("M-UI-1",),
    harm="garbled page: GET / is not served as UTF-8 HTML",
)
def ui_content_type(ev: Evidence) -> Outcome:
    got = ev.page
    if got is None or not got.ok:
        return absent(f"GET / failed ({why(ev, got)})")
    ctype = (ev.probe.content_type if ev.probe else None) or ""
    ok = ctype.replace(" ", "").lower() == "text/html;charset=utf-8"
    return graded(1.0 if ok else 0.0, f"Content-Type {ctype!r}")


@suite.check(
    "ui.table_rows",
    tier="ui",
    root="app.health",
    musts=("M-UI-2",),
    harm="misleading table: rows missing, out of order or with the wrong cells",
)
def ui_table_rows(ev: Evidence) -> Outcome:
    rows, why = page_rows(ev)
    if rows is None:
        return why
    stored = set(ev.ids(ev.listing))
    if not stored:
        return absent("nothing stored, no rows to compare")
    # one row per stored invoice, in the order first received (the upstream's order);
    # repeated rows are sync.no_duplicates' harm, so only first occurrences count here
    want = [inv for inv in ev.dataset.invoices if inv.id in stored]
    seen: set[str] = set()
    firsts = []
    for row in rows:
        if row.get("id") not in seen:
            seen.add(str(row.get("id")))
            firsts.append(row)
    good = 0
    for i, inv in enumerate(want):
        shown = firsts[i] if i < len(firsts) else None
        if (
            shown is not None
            and shown.get("id") == inv.id
            and len(shown["cells"]) == 4
            and shown["cells"][0] == inv.id
            and shown["cells"][2] == inv.currency
        ):
            good += 1
    extra = max(0, len(firsts) - len(want))
    if not want and not extra:
        return absent("no stored invoice of the upstream to show")
    return strict(good, len(want) + extra, "rows in order with id and currency cells")


@suite.check(
    "ui.rows_during_sync",
    tier="ui",
    root="app.health",
    musts=("M-UI-2",),
    harm="stale page: mid-sync the table does not show the invoices the app has stored",
)
def ui_rows_during_sync(ev: Evidence) -> Outcome:
    """The page read mid-sync (while the app waits on the backoff page, nothing new is
    stored) lists, row for row, what /api/invoices listed just before or just after."""
    look = ev.ui_during_sync
    if look is None:
        return page_rows(ev)[1] if ev.probe is None else absent("no look at the page mid-sync")
    if look.error:
        return absent(f"the page did not load mid-sync: {look.error}")
    if not look.before:
        return absent("nothing stored yet when the page was read mid-sync")
    ok = look.rows in (look.before, look.after)
    return graded(
        1.0 if ok else 0.0,
        f"mid-sync: {len(look.rows)} rows on the page, {len(look.before)} then "
        f"{len(look.after)} invoices listed by the API"
        + ("" if ok else f"; first difference at row {_first_diff(look.rows, look.before)}"),
    )


def _first_diff(a: list[str], b: list[str]) -> int:
    return next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y),
        min(len(a), len(b)),
    )


@suite.check(
    "ui.escaped",
    tier="ui",
    root="app.health",
    musts=("M-UI-4",),
    harm="markup injection: customer names are interpreted as HTML instead of shown as text",
)
def ui_escaped(ev: Evidence) -> Outcome:
    mine, why = expected_rows(ev)
    if why is not None:
        return why
    expected = ev.dataset.by_id
    # every markup name is in the fixtures on every seed; one that was never stored is
    # sync.complete's harm, so only the rows shown are judged here
    if not {expected[r["id"]].customer for r in mine} & set(MARKUP_NAMES):
        return absent("no row with a markup name on the page")
    return each(
        mine,
        lambda r: len(r["cells"]) >= 2 and r["cells"][1] == shown(expected[r["id"]].customer),
        "customer names shown exactly as received (as a browser lays text out)",
        lambda r: f"{(r['cells'] + ['', ''])[1][:60]!r} != {expected[r['id']].customer[:60]!r}",
    )


@suite.check(
    "ui.console_clean",
    tier="ui",
    root="app.health",
    musts=("M-UI-5",),
    harm="broken page script: errors in the browser console",
)
def ui_console_clean(ev: Evidence) -> Outcome:
    if ev.probe is None:
        return page_rows(ev)[1]
    if ev.probe.error:
        return absent(f"the page did not load: {ev.probe.error}")
    errors = ev.probe.console_errors
    return graded(
        0.0 if errors else 1.0,
        f"{len(errors)} console errors over {ev.timings.get('browser_s')} s on the page "
        f"({'the empty page at the first start, then ' if ev.empty_look else ''}mid-sync to "
        f"the end): {errors[:2]}",
    )


def shown_values(
    ev: Evidence, cells: tuple[int, ...]
) -> tuple[list[tuple[str, int, str, int]], Outcome | None]:
    """Every text the watch saw a cell of ``cells`` display in a row of a fixture
    invoice, from the browser's first look (mid-sync) to the end, or why none."""
    if ev.probe is None:
        return [], page_rows(ev)[1]
    got = [
        (rid, idx, text, t)
        for rid, idx, text, t in ev.shown
        if rid is not None
        and rid in ev.dataset.by_id
        and (idx in cells or (idx >= 4 and 4 in cells))
    ]
    if not got:
        return [], absent("no value of these cells was ever shown in an invoice's row")
    return got, None


def judge_throughout(ev: Evidence, cells: tuple[int, ...], want: Any, what: str) -> Outcome:
    values, why = shown_values(ev, cells)
    if why is not None:
        return why
    bad = [v for v in values if v[2] != want(v)]
    shown_ids = len({v[0] for v in values})
    detail = f"{len(values)} distinct {what} shown over the watch ({shown_ids} rows)"
    if bad:
        rid, idx, text, t = bad[0]
        detail += (
            f"; {len(bad)} not as the SPEC renders them, first: row {rid} cell {idx} showed "
            f"{text[:60]!r} {t / 1000:.1f} s into a page load, SPEC: {want(bad[0])[:60]!r}"
        )
    return graded(0.0 if bad else 1.0, detail)


@suite.check(
    "ui.cells_throughout",
    tier="ui",
    root="app.health",
    musts=("M-UI-2",),
    harm="flickering table: at some moment a row's id or currency cell shows something "
    "else, or a row shows more than four cells",
)
def ui_cells_throughout(ev: Evidence) -> Outcome:
    """Every id and currency text any row displayed while the browser watched (a
    MutationObserver from the first load, ``user_view``) is the invoice's own; no row
    ever showed a fifth cell."""
    by_id = ev.dataset.by_id

    def want(v: tuple[str, int, str, int]) -> str:
        rid, idx = v[0], v[1]
        return rid if idx == 0 else by_id[rid].currency if idx == 2 else "(no fifth cell)"

    return judge_throughout(ev, (0, 2, 4), want, "id, currency and extra cell texts")


@suite.check(
    "ui.names_throughout",
    tier="ui",
    root="app.health",
    musts=("M-UI-4",),
    harm="flickering names: at some moment a customer cell shows other text than the name",
)
def ui_names_throughout(ev: Evidence) -> Outcome:
    """Every customer text any row displayed while the browser watched is the name as
    received (as a browser lays text out)."""
    by_id = ev.dataset.by_id
    return judge_throughout(ev, (1,), lambda v: shown(by_id[v[0]].customer), "customer texts")


@suite.check(
    "ui.one_table",
    tier="ui",
    root="app.health",
    musts=("M-UI-2",),
    harm="split table: the page holds more (or fewer) than one table or table body",
)
def ui_one_table(ev: Evidence) -> Outcome:
    """One ``<table>`` and one ``<tbody>`` at the end and at every moment the watch saw
    rows (M-UI-2: "a page with one <table> whose <tbody> holds one row per invoice")."""
    if ev.probe is None or not ev.structure:
        return page_rows(ev)[1] if ev.probe is None else absent("the page was not read")
    shapes = {f"tables={ev.structure['tables']},bodies={ev.structure['bodies']}"} | ev.shapes
    ok = shapes == {"tables=1,bodies=1"}
    return graded(
        1.0 if ok else 0.0,
        f"page shapes seen (with rows): {sorted(shapes)}; read at the end over "
        f"{ev.structure.get('positions')} scroll positions in {ev.structure.get('scan_ms')} ms",
    )
