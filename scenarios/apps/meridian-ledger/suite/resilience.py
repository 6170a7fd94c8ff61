"""Checks of resilience: durability across SIGKILL, one payment per approval, approvals
that complete after a crash, /health mid-sync, the vendor down, concurrency, retries."""

from __future__ import annotations

import json

from harness.appkit import grading
from harness.scoring import Outcome, absent, fraction, graded

from .check_helpers import _ids
from .evidence import Evidence
from .grader import suite


@suite.check(
    "durability.kill",
    musts=("M-DUR-1",),
    critical=True,
    severity="data",
    root="app.boots",
    harm="lost data: payments or drafts stored before a SIGKILL are gone after the restart",
)
def durability_kill(ev: Evidence) -> Outcome:
    before = set(_ids(ev.listing))
    if not before:
        return absent("nothing was stored to survive the SIGKILL")
    if ev.down_error:
        return graded(0.0, f"no restart after SIGKILL: {ev.down_error}")
    after = set(_ids(ev.restored))
    items = ev.drafts_restored.get("items") if isinstance(ev.drafts_restored, dict) else None
    drafts = {str(d.get("id")) for d in items or [] if isinstance(d, dict)}
    lost = [d for d in ev.drafts_before_down if d not in drafts]
    return grading.strict(
        len(before & after) + len(ev.drafts_before_down) - len(lost),
        len(before) + len(ev.drafts_before_down),
        f"payments and drafts served after SIGKILL with the vendor offline; drafts lost {lost}",
    )


@suite.check(
    "payment.once",
    musts=("M-ONCE-1",),
    critical=True,
    severity="money",
    root="app.boots",
    harm="double payment: one approved draft became two vendor payments",
)
def payment_once(ev: Evidence) -> Outcome:
    drafts = [d for d in (ev.draft_a, ev.draft_b) if d]
    if not drafts:
        return absent("no draft was approved")
    made: dict[str, set[str]] = {}
    for c in ev.creations:
        if c.get("status") in (200, 201) and c.get("payment"):
            made.setdefault(str(c.get("reference")), set()).add(str(c["payment"]))
    ok = [d for d in drafts if len(made.get(d, set())) <= 1]
    c_ok = ev.draft_c is None or not made.get(ev.draft_c)
    return grading.strict(
        len(ok) + c_ok,
        len(drafts) + 1,
        f"vendor payments per draft { ({k: len(v) for k, v in made.items()}) }",
    )


@suite.check(
    "approval.completes",
    musts=("M-ONCE-3",),
    critical=True,
    severity="flow",
    root="app.boots",
    harm="stuck approval: a draft approved when the service crashed never completes",
)
def approval_completes(ev: Evidence) -> Outcome:
    if ev.draft_b is None:
        return absent("no draft could be created")
    if not ev.held_create:
        return graded(0.0, "the approval never reached the vendor")
    if ev.approval_kill_error:
        return graded(0.0, f"no restart: {ev.approval_kill_error}")
    d = ev.draft_b_after if isinstance(ev.draft_b_after, dict) else {}
    made = {
        str(c["payment"])
        for c in ev.creations
        if c.get("reference") == ev.draft_b and c.get("payment")
    }
    ok = d.get("state") == "executed" and d.get("vendor_payment_id") in made
    return graded(1.0 if ok else 0.0, f"after SIGKILL and restart: {json.dumps(d)[:160]}")


@suite.check(
    "res.health_during_sync",
    musts=("M-HEALTH-1",),
    tier="resilience",
    root="app.boots",
    harm="blind operations: /health hangs while the sync waits on the vendor",
)
def res_health_during_sync(ev: Evidence) -> Outcome:
    if not ev.killed_mid_sync:
        return absent("the sync never reached the held page")
    got = ev.health_during_sync
    ok = got is not None and got.status == 200 and not ev.health_stalls
    stalls = (
        f"; {len(ev.health_stalls)} unanswered: {ev.health_stalls[0]}" if ev.health_stalls else ""
    )
    detail = f"GET /health mid-sync: {got.status if got else None}{stalls}"
    return graded(1.0 if ok else 0.0, detail)


@suite.check(
    "res.down_boot",
    musts=("M-DOWN-1",),
    tier="resilience",
    root="app.boots",
    harm="outage cascade: the service cannot start or serve while the vendor is down",
)
def res_down_boot(ev: Evidence) -> Outcome:
    if ev.down_boot_s is None:
        return absent(f"no restart with the vendor offline: {ev.down_error}")
    st = ev.down_status if isinstance(ev.down_status, dict) else {}
    steps = {
        "healthy": True,
        "serves stored payments": bool(ev.restored),
        "status says vendor down": st.get("vendor") == "down",
    }
    ok = [k for k, v in steps.items() if v]
    return fraction(len(ok), len(steps), f"{steps}; boot {ev.down_boot_s} s")


@suite.check(
    "res.approval_retry",
    musts=("M-APPROVE-1",),
    tier="resilience",
    root="app.boots",
    harm="fragile approval: a repeated approve is not refused once executed",
)
def res_approval_retry(ev: Evidence) -> Outcome:
    got = ev.approve_a_again
    if got is None:
        return absent("no executed draft to approve again")
    return graded(
        1.0 if got.status == 409 else 0.0, f"second approve of an executed draft: {got.status}"
    )


@suite.check(
    "res.concurrent",
    tier="resilience",
    root="app.boots",
    musts=("M-CONC-1",),
    harm="frozen service: one request waiting on the vendor blocks every other request",
)
def res_concurrent(ev: Evidence) -> Outcome:
    if not ev.held_create:
        return graded(0.0, "the approval never reached the vendor (nothing was waiting on it)")
    got = ev.during_hold
    ok = got is not None and got.status == 200
    return graded(
        1.0 if ok else 0.0,
        f"GET /api/status while an approval waits on the vendor: {got.status if got else None} "
        f"{(got.error or '') if got else ''}"[:160],
    )


@suite.check(
    "res.approval_502",
    tier="resilience",
    root="app.boots",
    musts=("M-APPROVE-2",),
    harm="stuck draft: an approval the vendor could not take is not a 502, or stays approving",
)
def res_approval_502(ev: Evidence) -> Outcome:
    got = ev.approve_c_api
    if got is None:
        return graded(0.0, f"no approval with the vendor offline ({ev.down_error})")
    after = ev.draft_c_after if isinstance(ev.draft_c_after, dict) else {}
    ok = got.status == 502 and after.get("state") == "pending_approval"
    return graded(
        1.0 if ok else 0.0,
        f"approve with the vendor offline: {got.status}; draft then {after.get('state')!r}",
    )
