"""Checks of validation and docs: bad queries and drafts refused, the tokens' roles,
webhook signatures and the timestamp window, the README."""

from __future__ import annotations

from harness.appkit import grading
from harness.scoring import Outcome, absent, fraction, graded

from .bounds import DRAFT_A, DRAFT_D, README_NEEDS
from .evidence import Evidence
from .grader import suite
from .vendor_model import WINDOW_S


@suite.check(
    "val.query",
    musts=("M-API-1",),
    tier="validation",
    root="app.boots",
    harm="silent garbage: invalid filters or paging are not rejected with 400",
)
def val_query(ev: Evidence) -> Outcome:
    if not ev.bad_queries:
        return absent("the API was not reached")
    bad = [q for q, s in ev.bad_queries.items() if s != 400]
    n = len(ev.bad_queries)
    # a query answered with data it did not ask for is a wrong answer: all or nothing
    return graded(0.0 if bad else 1.0, f"{n - len(bad)}/{n} answered 400; not 400: {bad[:4]}")


@suite.check(
    "val.drafts",
    musts=("M-DRAFT-1",),
    tier="validation",
    root="app.boots",
    harm="bad payments: invalid drafts are accepted (float, string, negative, unknown currency)",
)
def val_drafts(ev: Evidence) -> Outcome:
    calls = {k: v for k, v in ev.draft_calls.items() if k.startswith("bad:")}
    if not calls:
        return absent("POST /api/drafts was not reached")
    ok = [k for k, v in calls.items() if v.status == 400]
    items = ev.drafts_after_bad.get("items") if isinstance(ev.drafts_after_bad, dict) else None
    clean = isinstance(items, list) and len(items) == 0
    wrong = [f"{k}->{v.status}" for k, v in calls.items() if v.status != 400]
    # valid at the bounds: trimmed to 80 characters, 10**18; stored trimmed
    bounds = []
    for tag, body in (("a", DRAFT_A), ("d", DRAFT_D)):
        got = ev.draft_calls.get(f"create:{tag}")
        have = got.body if got is not None and isinstance(got.body, dict) else {}
        if (
            got is None
            or got.status != 201
            or have.get("counterparty") != str(body["counterparty"]).strip()
        ):
            bounds.append(
                f"{tag}: {got.status if got else None} {str(have.get('counterparty'))[:20]!r}"
            )
    # one accepted invalid draft is a payment that should not exist: all or nothing
    good = len(ok) + clean == len(calls) + 1 and not bounds
    return graded(
        1.0 if good else 0.0,
        f"{len(ok)}/{len(calls)} rejected with 400; none stored {clean}; wrong {wrong[:3]}; "
        f"valid at the bounds refused or untrimmed {bounds}",
    )


@suite.check(
    "val.auth",
    musts=("M-AUTH-1",),
    tier="validation",
    root="app.boots",
    harm="broken four-eyes rule: drafts created or approved without the right token",
)
def val_auth(ev: Evidence) -> Outcome:
    want = {
        "create:no-token": 401,
        "create:checker": 403,
        "approve:no-token": 401,
        "approve:maker": 403,
    }
    got = {k: ev.draft_calls[k].status for k in want if k in ev.draft_calls}
    if not got:
        return absent("the drafts API was not reached")
    ok = [k for k, s in got.items() if s == want[k]]
    return grading.strict(len(ok), len(want), f"answers {got}")


@suite.check(
    "val.webhook_signature",
    musts=("M-HOOK-1",),
    tier="validation",
    root="app.boots",
    harm="forged events: webhooks with a bad signature are accepted or applied",
)
def val_webhook_signature(ev: Evidence) -> Outcome:
    forged = [r for r in ev.trace if r.get("kind") == "webhook" and not r["signed"]]
    if not forged:
        return graded(0.0, "no forged webhook was delivered (the sync did not get that far)")
    by_id = {str(i.get("id")): i for i in ev.listing or []}
    good = 0
    for r in forged:
        item = by_id.get(r["payment"])
        applied = item is not None and item.get("version") == r["version"]
        good += int(r["app_status"] == 401) + int(item is not None and not applied)
    return grading.strict(good, 2 * len(forged), "forged events answered 401 and not applied")


@suite.check(
    "val.webhook_window",
    tier="validation",
    root="app.boots",
    musts=("M-HOOK-2",),
    harm="replayed events: a captured webhook replayed later (or dated ahead) is applied",
)
def val_webhook_window(ev: Evidence) -> Outcome:
    sent = [r for r in ev.trace if r.get("kind") == "webhook" and r.get("offset")]
    if not sent:
        return graded(0.0, "no webhook around the window was delivered (the sync stopped early)")
    by_id = {str(i.get("id")): i for i in ev.listing or []}
    bad = []
    for r in sent:
        inside = abs(int(r["offset"])) <= WINDOW_S
        item = by_id.get(r["payment"])
        applied = item is not None and item.get("version") == r["version"]
        want = (200, True) if inside else (401, False)
        if (r["app_status"], applied) != want:
            bad.append(f"{r['offset']:+d} s: {r['app_status']}, applied {applied}")
    return graded(0.0 if bad else 1.0, f"{len(sent)} events at -290/-310/+310 s; wrong {bad}")


@suite.check(
    "docs.readme",
    musts=("M-DOCS-1",),
    tier="validation",
    root="app.boots",
    harm="undocumented service: README.md does not say how to run it or what it serves",
)
def docs_readme(ev: Evidence) -> Outcome:
    have = [n for n in README_NEEDS if n in ev.readme]
    missing = [n for n in README_NEEDS if n not in ev.readme]
    return fraction(len(have), len(README_NEEDS), f"README.md mentions; missing {missing}")
