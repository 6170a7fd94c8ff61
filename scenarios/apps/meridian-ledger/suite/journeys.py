"""Checks of the console's journeys in a real browser: approving a draft with a click,
and the error an approval shows while the vendor is down."""

from __future__ import annotations

from typing import Any

from harness.scoring import Outcome, absent, fraction, unavailable

from .evidence import Evidence
from .grader import suite


@suite.check(
    "journey.approve_click",
    musts=("M-UI-5",),
    tier="journeys",
    root="app.boots",
    harm="dead button: a checker cannot approve a draft from the console",
)
def journey_approve_click(ev: Evidence) -> Outcome:
    if ev.probe_error:
        return unavailable(f"no browser: {ev.probe_error}")
    if ev.draft_a is None:
        return absent("no draft could be created to approve")
    a = ev.approve_click
    api: dict[str, Any] = a["api"] if isinstance(a.get("api"), dict) else {}
    steps = {
        "button present": bool(a.get("button")),
        "page shows executed": bool(a.get("shown")),
        "API says executed": api.get("state") == "executed" and bool(api.get("vendor_payment_id")),
    }
    ok = [k for k, v in steps.items() if v]
    return fraction(len(ok), len(steps), f"steps {steps}", a.get("shot"))


@suite.check(
    "journey.down_error",
    musts=("M-UI-2",),
    tier="journeys",
    root="app.boots",
    harm="silent failure: an approval while the vendor is down shows no error",
)
def journey_down_error(ev: Evidence) -> Outcome:
    if ev.probe_error:
        return unavailable(f"no browser: {ev.probe_error}")
    look = ev.down_console
    if not look:
        return absent(f"the vendor-down console was not reached ({ev.down_error})")
    after = ev.draft_c_after if isinstance(ev.draft_c_after, dict) else {}
    steps = {
        "error visible": bool(look.get("error_shown"))
        and bool(str(look.get("error_text", "")).strip()),
        "draft not executed": bool(after) and after.get("state") != "executed",
    }
    ok = [k for k, v in steps.items() if v]
    return fraction(
        len(ok),
        len(steps),
        f"steps {steps}; error {str(look.get('error_text'))[:80]!r}",
        look.get("error_shot"),
    )
