"""The check of GET /api/invoices."""

from typing import Any

from harness.appkit.grading import (
    each,
)
from harness.scoring import Outcome, absent

from .evidence import Evidence, why
from .grader import suite


@suite.check(
    "api.listing_exact",
    tier="core",
    root="app.health",
    musts=("M-API-1",),
    harm="corrupted API: invoices altered, missing fields or not in first-received order",
)
def api_listing_exact(ev: Evidence) -> Outcome:
    items = ev.invoices(ev.listing)
    if items is None:
        return absent(f"GET /api/invoices gave no invoice list ({why(ev, ev.listing)})")
    first: dict[str, dict[str, Any]] = {}
    for item in items:
        first.setdefault(str(item.get("id")), item)
    expected = ev.dataset.by_id
    order = [inv.id for inv in ev.dataset.invoices if inv.id in first]
    listed = list(first)
    if not listed:
        return absent("GET /api/invoices listed nothing")

    def exact(pair: tuple[int, str]) -> bool:
        i, ident = pair
        want = expected.get(ident)
        got = first[ident]
        return (
            want is not None
            and got == want.as_json()
            and type(got.get("amount_minor")) is int
            and i < len(order)
            and order[i] == ident
        )

    return each(
        list(enumerate(listed)),
        exact,
        "entries exact and in first-received order",
        lambda p: p[1],
    )
