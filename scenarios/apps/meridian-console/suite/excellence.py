"""The excellence checks: graded continuously, unlocked by the gates."""

from __future__ import annotations

from typing import Any

from harness.scoring import Outcome, absent, graded

from .grader import ck
from .readers import FE_BUDGET, main, no_browser

# -- excellence (graded continuously; unlocked by the gates) --------------------------------


@ck("exc.api_compact", "excellence", "heavy API: bytes per listed item")
def exc_api_compact(ev: Any) -> Outcome:
    text = ev.listing_text
    if not text or not ev.listing:
        return absent("no listing")
    per = len(text.encode()) / max(1, min(500, len(ev.listing)))
    return graded(max(0.0, min(1.0, (400 - per) / 200)), f"{per:.0f} bytes per item")


@ck("exc.fe_bytes", "excellence", "heavy console: frontend bytes", root="journey.load")
def exc_fe_bytes(ev: Any) -> Outcome:
    reqs = main(ev).get("requests") or []
    static = [r for r in reqs if r.get("type") in ("document", "script", "stylesheet")]
    if not static:
        return no_browser(ev, "console requests")
    size = sum(int(r.get("size") or 0) for r in static)
    return graded(max(0.0, min(1.0, (FE_BUDGET - size) / (FE_BUDGET - 20_000))), f"{size} bytes")
