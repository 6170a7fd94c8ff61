"""Checks of tier D: what the services refuse (queries, drafts, roles, webhooks, edits,
notes)."""

from __future__ import annotations

from typing import Any

from harness.appkit.grading import holds
from harness.scoring import Outcome, absent

from .grader import ck

# -- D: validation ------------------------------------------------------------------------


@ck(
    "val.query",
    "validation",
    "silent wrong answers: invalid query parameters accepted",
    ("M-API-3",),
)
def val_query(ev: Any) -> Outcome:
    if not ev.bad_queries:
        return absent("not asked")
    bad = {q: s for q, s in ev.bad_queries.items() if s != 400}
    return holds(not bad, f"not 400: {bad}")


@ck("val.drafts", "validation", "bad payments: invalid drafts stored", ("M-PAY-1",))
def val_drafts(ev: Any) -> Outcome:
    answers = {k: c.status for k, c in ev.calls.items() if k.startswith("bad:")}
    if not answers:
        return absent("not asked")
    bad = {k: s for k, s in answers.items() if s != 400}
    stored = ev.drafts_after_bad
    empty = isinstance(stored, dict) and stored.get("items") == []
    return holds(not bad and empty, f"not 400: {bad}; nothing stored: {empty}")


@ck("val.roles", "validation", "fraud: roles of maker and checker not enforced", ("M-PAY-2",))
def val_roles(ev: Any) -> Outcome:
    want = {
        "create:no-token": 401,
        "create:unknown": 401,
        "create:checker": 403,
        "approve:no-token": 401,
        "approve:unknown": 401,
        "approve:maker": 403,
        "approve:own": 403,
        "approve:lead": 200,  # the lead may approve a draft it did not make
    }
    got = {k: (ev.calls[k].status if k in ev.calls else None) for k in want}
    bad = {k: v for k, v in got.items() if v != want[k]}
    return holds(not bad and None not in got.values(), f"wrong: {bad}")


@ck(
    "val.webhook_signature", "validation", "forged state: unsigned webhooks accepted", ("M-HOOK-1",)
)
def val_webhook_signature(ev: Any) -> Outcome:
    hooks = [r for r in ev.trace if r.get("kind") == "hook" and r.get("cls") == "forged"]
    if not hooks:
        return absent("no forged event delivered")
    answered = all(r.get("answer") == 401 for r in hooks)
    by = {str(i.get("id")): i for i in ev.listing or []}
    applied = [r for r in hooks if (by.get(r["payment"]) or {}).get("version") == r["version"]]
    # and one with no signature header at all
    unsigned = ev.calls.get("hook:unsigned")
    later = {str(i.get("id")): i for i in (ev.before_cold or {}).get("listing") or []}
    pid, version = (ev.unsigned_hook or [None, None])[:2]
    took = pid is not None and (later.get(pid) or {}).get("version") == version
    return holds(
        answered and not applied and unsigned is not None and unsigned.status == 401 and not took,
        f"answers {[r.get('answer') for r in hooks]}; applied {len(applied)}; unsigned: "
        f"{unsigned.status if unsigned else None}, applied {took}",
    )


@ck(
    "val.webhook_window",
    "validation",
    "replay attacks: events outside the window accepted",
    ("M-HOOK-2",),
)
def val_webhook_window(ev: Any) -> Outcome:
    hooks = {
        r.get("cls"): r
        for r in ev.trace
        if r.get("kind") == "hook" and r.get("cls") in ("stale", "future", "edge")
    }
    if len(hooks) < 3:
        return absent(f"window events delivered: {sorted(hooks)}")
    by = {str(i.get("id")): i for i in ev.listing or []}
    ok = all(hooks[c].get("answer") == 400 for c in ("stale", "future"))
    applied = [
        c
        for c in ("stale", "future")
        if (by.get(hooks[c]["payment"]) or {}).get("version") == hooks[c]["version"]
    ]
    edge = (
        hooks["edge"].get("answer") in (200, 202)
        and (by.get(hooks["edge"]["payment"]) or {}).get("version") == hooks["edge"]["version"]
    )
    return holds(
        ok and not applied and edge,
        f"stale/future {[hooks[c].get('answer') for c in ('stale', 'future')]}, applied {applied}; 290 s old applied: {edge}",  # noqa: E501  (a calibrated string, kept as it was scored)
    )


@ck(
    "val.edit_precondition",
    "validation",
    "lost updates: edits without a current revision accepted",
    ("M-EDIT-1",),
)
def val_edit_precondition(ev: Any) -> Outcome:
    e = ev.edits
    if not e:
        return absent("no edits made")
    ok = e.get("no_if_match") == 428 and e.get("stale") == 412
    return holds(ok, f"no If-Match: {e.get('no_if_match')}; stale: {e.get('stale')}")


@ck("val.note_body", "validation", "bad notes: a non-string note or no token accepted")
def val_note_body(ev: Any) -> Outcome:
    e = ev.edits
    if not e:
        return absent("no edits made")
    return holds(
        e.get("bad_note") == 400 and e.get("no_token") == 401,
        f"note 5: {e.get('bad_note')}; no token: {e.get('no_token')}",
    )
