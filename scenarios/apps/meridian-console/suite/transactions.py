"""Checks of tier T: drafts, approvals and edits (each payment once, recovery after a kill,
conflicts, roles, notes kept)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from harness.appkit.grading import holds
from harness.scoring import Outcome, absent

from .drive import DRAFTS
from .fixtures import money
from .grader import ck

# -- T: transactions (drafts, approvals, edits) -------------------------------------------


@ck(
    "pay.once",
    None,
    "money paid twice: a draft created more than one vendor payment",
    ("M-PAY-3",),
    critical=True,
    severity="money",
)
def pay_once(ev: Any) -> Outcome:
    if not ev.creations:
        return absent("no payment was created")
    per = Counter(str(c.get("reference")) for c in ev.creations)
    twice = {k: n for k, n in per.items() if n > 1}
    return holds(not twice, f"{len(per)} drafts paid; more than once: {twice}")


@ck(
    "pay.recovers",
    None,
    "stuck money: an approval interrupted by a crash never completes",
    ("M-PAY-4",),
    critical=True,
    severity="flow",
)
def pay_recovers(ev: Any) -> Outcome:
    if ev.approval_kill_error:
        return absent(f"no restart after the approval kill: {ev.approval_kill_error}")
    d = ev.draft_states.get("b")
    if not ev.held_create or not isinstance(d, dict):
        return absent("the held creation was never reached")
    vendor_ids = {c["id"] for c in ev.creations if str(c.get("reference")) == ev.drafts.get("b")}
    ok = d.get("state") == "executed" and d.get("vendor_payment_id") in vendor_ids
    return holds(
        ok,
        f"draft B {d.get('state')} with {d.get('vendor_payment_id')}; vendor made {sorted(vendor_ids)}",  # noqa: E501  (a calibrated string, kept as it was scored)
    )


@ck(
    "pay.conflict",
    "transactions",
    "confusing API: approving an executed draft does not say 409",
    ("M-PAY-5",),
)
def pay_conflict(ev: Any) -> Outcome:
    got = ev.calls.get("approve:again")
    if got is None:
        return absent("not asked")
    did = ev.drafts.get("a")
    n = sum(1 for c in ev.creations if str(c.get("reference")) == did)
    return holds(
        got.status == 409 and n == 1, f"second approval: {got.status}; vendor payments {n}"
    )


@ck(
    "pay.vendor_ids",
    "transactions",
    "unreconcilable: executed drafts lack the vendor's payment id",
    ("M-PAY-4",),
)
def pay_vendor_ids(ev: Any) -> Outcome:
    drafts = (ev.before_cold.get("drafts") or {}).get("items") if ev.before_cold else None
    if not drafts:
        return absent("no drafts listed")
    made = {str(c.get("reference")): c["id"] for c in ev.creations}
    executed = [d for d in drafts if d.get("state") == "executed"]
    bad = [
        d.get("id") for d in executed if made.get(str(d.get("id"))) != d.get("vendor_payment_id")
    ]
    return holds(bool(executed) and not bad, f"{len(executed)} executed; wrong ids {bad}")


@ck(
    "pay.draft_money",
    "transactions",
    "wrong money: draft amounts not exact money strings",
    ("M-MONEY-1",),
)
def pay_draft_money(ev: Any) -> Outcome:
    bodies = {t: ev.calls[f"create:{t}"].body for t in ev.drafts}
    if not bodies:
        return absent("no drafts created")
    bad = [
        t
        for t, b in bodies.items()
        if not isinstance(b, dict)
        or b.get("amount") != money(DRAFTS[t][1]["amount_minor"], DRAFTS[t][1]["currency"])
        or b.get("amount_minor") != DRAFTS[t][1]["amount_minor"]
    ]
    return holds(not bad, f"wrong draft amounts: {bad}")


@ck("pay.failed_kept", "transactions", "phantom payments: an approval that failed shows executed")
def pay_failed_kept(ev: Any) -> Outcome:
    e = ev.browser.get("errors") or {}
    d = e.get("draft_f")
    if not isinstance(d, dict):
        return absent("no failed approval")
    return holds(d.get("state") == "pending" and bool(d.get("error")), f"draft F: {d}"[:200])


@ck(
    "pay.roles_ok",
    "transactions",
    "blocked work: the lead's draft cannot be approved by a checker",
    ("M-PAY-2",),
)
def pay_roles_ok(ev: Any) -> Outcome:
    got = ev.partition.get("approve_c") if ev.partition else None
    if got is None:
        return absent("draft C was not approved")
    return holds(got == 200, f"checker approving the lead's draft: {got}")


@ck(
    "edit.one_winner",
    "transactions",
    "lost updates: concurrent edits with one revision all win",
    ("M-EDIT-1",),
)
def edit_one_winner(ev: Any) -> Outcome:
    e = ev.edits
    if not e or not e.get("race"):
        return absent("no concurrent edits")
    codes = Counter(s for _k, s in e["race"])
    after = e.get("after_race") or {}
    body = e.get("winner_body")
    body = body if isinstance(body, dict) else {}
    rev = e.get("rev")
    # SPEC 5.4: the 200 answers with the updated item, its revision one more than named
    bumped = (
        isinstance(rev, int)
        and body.get("revision") == rev + 1
        and after.get("revision") == rev + 1
        and body.get("note") == e.get("winner_note")
    )
    ok = (
        codes.get(200) == 1
        and codes.get(412) == len(e["race"]) - 1
        and after.get("note") == e.get("winner_note")
        and bumped
    )
    return holds(
        ok,
        f"answers {dict(codes)}; stored note {after.get('note')!r} (winner {e.get('winner_note')!r}); "  # noqa: E501  (a calibrated string, kept as it was scored)
        f"revision {rev} -> answered {body.get('revision')}, stored {after.get('revision')}",
    )


@ck(
    "edit.webhook_keeps_note",
    "transactions",
    "lost notes: a webhook wiped a person's note",
    ("M-EDIT-2",),
)
def edit_webhook_keeps_note(ev: Any) -> Outcome:
    e = ev.edits
    if not e or e.get("y_edit") != 200:
        return absent(f"the note was not stored: {e.get('y_edit') if e else None}")
    before, after = e.get("y_before") or {}, e.get("y_after") or {}
    want = ev.extra_truth.get(e.get("y_id"))
    ok = (
        after.get("note") == "checked <b>twice</b>"
        and want is not None
        and (after.get("status"), after.get("version")) == want
        and after.get("revision") == (before.get("revision") or 0) + 1
    )
    return holds(
        ok,
        f"before {before.get('note')!r} r{before.get('revision')}, after {after.get('note')!r} r{after.get('revision')} {after.get('status')}",  # noqa: E501  (a calibrated string, kept as it was scored)
    )


@ck(
    "edit.walk_keeps_note", "transactions", "lost notes: a new snapshot wiped a note", ("M-EDIT-2",)
)
def edit_walk_keeps_note(ev: Any) -> Outcome:
    e = ev.edits
    items = (ev.after_resync or {}).get("listing")
    if not e or not items or not e.get("winner_note"):
        return absent("no note, or no second walk")
    x = {str(i.get("id")): i for i in items}.get(e["x_id"]) or {}
    want = (ev.truth_at.get("resync") or {}).get(e["x_id"])
    ok = x.get("note") == e["winner_note"] and (x.get("status"), x.get("version")) == want
    return holds(
        ok,
        f"after the walk: note {x.get('note')!r}, {x.get('status')} v{x.get('version')} (want {want})",  # noqa: E501  (a calibrated string, kept as it was scored)
    )
