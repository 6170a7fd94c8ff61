"""Run a suite's checks against a context and collect rows.

A check that raises becomes ``unavailable`` with the error text: a harness failure is
never silently the app's zero. A check whose root failed is not run; it is ``vacuous``,
so one root defect is one defect.
"""

from __future__ import annotations

from typing import Any

from harness.scoring.rows import Outcome, Row, Status
from harness.scoring.suite import Check, Suite


def run_checks(suite: Suite, ctx: Any) -> list[Row]:
    """Run every check in declaration order; never raises for a failing check."""
    rows: dict[str, Row] = {}
    for chk in suite.checks:
        root = rows.get(chk.root) if chk.root else None
        if root is not None and root.failed:
            rows[chk.name] = _vacuous(chk, root)
            continue
        rows[chk.name] = chk.row(_measure(chk, ctx))
    return list(rows.values())


def mark_vacuous(rows: list[Row]) -> list[Row]:
    """Mark rows whose root (in ``rows``) failed as vacuous; order is kept.

    Used for synthetic row sets, which do not go through ``run_checks``.
    """
    seen: dict[str, Row] = {}
    for row in rows:
        root = seen.get(row.root) if row.root else None
        if root is not None and root.failed and row.status is not Status.VACUOUS:
            row = row.model_copy(
                update={
                    "status": Status.VACUOUS,
                    "score": 0.0,
                    "detail": f"not measured: root {root.check} failed",
                }
            )
        seen[row.check] = row
    return list(seen.values())


def _measure(chk: Check, ctx: Any) -> Outcome:
    try:
        outcome = chk.fn(ctx)
    except Exception as exc:  # a broken check is the harness's problem, not the app's
        return Outcome(
            score=0.0, status=Status.UNAVAILABLE, detail=f"check raised {type(exc).__name__}: {exc}"
        )
    if not isinstance(outcome, Outcome):
        return Outcome(
            score=0.0,
            status=Status.UNAVAILABLE,
            detail=f"check returned {type(outcome).__name__}, not an Outcome",
        )
    return outcome


def _vacuous(chk: Check, root: Row) -> Row:
    return chk.row(
        Outcome(score=0.0, status=Status.VACUOUS, detail=f"not measured: root {root.check} failed")
    )
