"""Readings several checks share: listed ids, the missing-listing outcome, the strict
fraction, the console's payment rows and the drafts each must show."""

from __future__ import annotations

from typing import Any

from harness.scoring import Outcome, absent, graded, unavailable

from .bounds import DRAFT_A, DRAFT_B, DRAFT_C, DRAFT_D
from .evidence import Evidence


def _ids(items: list[dict[str, Any]] | None) -> list[str]:
    return [str(i.get("id")) for i in items or []]


def _no_listing(ev: Evidence) -> Outcome:
    if ev.respawn_error:
        return absent(f"no restart after SIGKILL: {ev.respawn_error}")
    return absent("GET /api/payments gave no {items: [...]} listing")


def _strict(good: int, total: int, detail: str) -> Outcome:
    """A fraction where any miss halves the grade (one wrong number is wrong data)."""
    if total <= 0:
        return absent(f"nothing to compare: {detail}")
    score = 1.0 if good == total else 0.5 * good / total
    return graded(score, f"{good}/{total}: {detail}")


def _payment_rows(ev: Evidence) -> tuple[list[dict[str, Any]] | None, Outcome | None]:
    if ev.probe_error:
        return None, unavailable(f"no browser: {ev.probe_error}")
    if not ev.console:
        return None, absent("the console was not looked at (earlier failure)")
    rows = [
        r
        for key, look in ev.console.items()
        if key.startswith("page")
        for r in look["rows"]
        if str(r.get("id")) in ev.dataset.by_id
    ]
    return rows, None


def _drafts_truth(ev: Evidence) -> dict[str, dict[str, Any]]:
    """What each created draft must show: id -> the body it was created with, trimmed."""
    out = {}
    bodies = {"a": DRAFT_A, "b": DRAFT_B, "c": DRAFT_C, "d": DRAFT_D}
    for tag in "abcd":
        got = ev.draft_calls.get(f"create:{tag}")
        ident = getattr(ev, f"draft_{tag}")
        if ident and got is not None and isinstance(got.body, dict):
            body = {**got.body, **bodies.get(tag, {})}
            body["counterparty"] = str(body.get("counterparty", "")).strip()
            out[ident] = body
    return out


def _draft_rows(ev: Evidence) -> list[dict[str, Any]]:
    want = _drafts_truth(ev)
    return [r for r in ev.console.get("page1", {}).get("rows", []) if r.get("id") in want]
