"""A suite's checks run against a context (scoring/run.py): a raising check is
unavailable, a check below a failed root is vacuous."""

from __future__ import annotations

from typing import Any

import pytest

from harness.scoring.rows import Outcome, Row, Status
from harness.scoring.run import mark_vacuous, run_checks
from harness.scoring.suite import Suite

pytestmark = pytest.mark.unit


def suite() -> Suite:
    return Suite(name="s", version="1.0.0", tier_weights={"core": 1.0})


def score(value: float, status: Status = Status.OK) -> Any:
    return lambda ctx: Outcome(score=value, status=status, detail=f"ctx={ctx}")


def by_check(rows: list[Row]) -> dict[str, Row]:
    return {r.check: r for r in rows}


def test_checks_run_in_order_against_the_context() -> None:
    s = suite()
    s.add("b", score(0.5), harm="h", tier="core")
    s.add("a", score(1.0), harm="h", tier="core")
    rows = run_checks(s, "the-app")
    assert [r.check for r in rows] == ["b", "a"]
    assert rows[0].score == 0.5 and rows[0].detail == "ctx=the-app"
    assert rows[0].status is Status.OK and rows[0].tier == "core"


def test_a_check_that_raises_or_returns_no_outcome_is_unavailable() -> None:
    s = suite()

    def broken(ctx: object) -> Outcome:
        raise KeyError("price")

    s.add("raises", broken, harm="h", tier="core")
    s.add("wrong", lambda ctx: 1.0, harm="h", tier="core")  # type: ignore[arg-type, return-value]
    rows = by_check(run_checks(s, None))
    assert rows["raises"].status is Status.UNAVAILABLE and rows["raises"].score == 0.0
    assert rows["raises"].detail == "check raised KeyError: 'price'"
    assert rows["wrong"].status is Status.UNAVAILABLE
    assert rows["wrong"].detail == "check returned float, not an Outcome"


def test_a_check_below_a_failed_root_is_vacuous_and_not_run() -> None:
    ran: list[str] = []

    def counted(name: str, value: float) -> Any:
        def fn(ctx: object) -> Outcome:
            ran.append(name)
            return Outcome(score=value)

        return fn

    s = suite()
    s.add("boot", counted("boot", 0.0), harm="h", tier="core")
    s.add("page", counted("page", 1.0), harm="h", tier="core", root="boot")
    s.add("alive", counted("alive", 0.3), harm="h", tier="core")
    s.add("api", counted("api", 1.0), harm="h", tier="core", root="alive")
    rows = by_check(run_checks(s, None))
    assert ran == ["boot", "alive", "api"]  # page never ran
    assert rows["page"].status is Status.VACUOUS and rows["page"].score == 0.0
    assert rows["page"].detail == "not measured: root boot failed"
    assert rows["api"].status is Status.OK and rows["api"].score == 1.0  # 0.3 is no failure


def test_mark_vacuous_marks_synthetic_rows_below_a_failed_root() -> None:
    s = suite()
    s.add("boot", score(0.0), harm="h", tier="core")
    s.add("page", score(1.0), harm="h", tier="core", root="boot")
    s.add("fine", score(1.0), harm="h", tier="core")
    s.add("other", score(1.0), harm="h", tier="core", root="fine")
    checks = {c.name: c for c in s.checks}
    rows = [
        checks["boot"].row(Outcome(score=0.0, status=Status.ABSENT)),
        checks["page"].row(Outcome(score=1.0)),
        checks["fine"].row(Outcome(score=1.0)),
        checks["other"].row(Outcome(score=0.7)),
    ]
    marked = mark_vacuous(rows)
    assert [r.check for r in marked] == ["boot", "page", "fine", "other"]
    assert marked[1].status is Status.VACUOUS and marked[1].score == 0.0
    assert marked[1].detail == "not measured: root boot failed"
    assert marked[0] == rows[0] and marked[2] == rows[2] and marked[3] == rows[3]
