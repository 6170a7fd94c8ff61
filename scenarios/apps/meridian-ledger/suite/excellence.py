"""Excellence checks, graded continuously: the economy of the console page and of the
API listing (bytes per row and per item)."""

from __future__ import annotations

import contextlib
import json

from harness.scoring import Outcome, absent, graded

from .evidence import Evidence
from .grader import suite


@suite.check(
    "exc.page_weight",
    tier="excellence",
    root="app.boots",
    harm="heavy console: bytes per payment row beyond what the table needs",
)
def exc_page_weight(ev: Evidence) -> Outcome:
    rows = [
        r
        for r in ev.console.get("page1", {}).get("rows", [])
        if str(r.get("id")) in ev.dataset.by_id
    ]
    if not ev.console_html or not rows:
        return absent("no console page with rows")
    per_row = len(ev.console_html.encode()) / len(rows)
    return graded(
        round(max(0.0, min(1.0, (600 - per_row) / 500)), 2), f"{per_row:.0f} bytes per row"
    )


@suite.check(
    "exc.api_compact",
    tier="excellence",
    root="app.boots",
    harm="heavy API: bytes per listed payment beyond the fields the SPEC asks for",
)
def exc_api_compact(ev: Evidence) -> Outcome:
    data = None
    with contextlib.suppress(ValueError):
        data = json.loads(ev.listing_text)
    items = data.get("items") if isinstance(data, dict) else None
    if not items:
        return absent("no listing")
    per_item = len(ev.listing_text.encode()) / len(items)
    return graded(
        round(max(0.0, min(1.0, (400 - per_item) / 300)), 2), f"{per_item:.0f} bytes per item"
    )
