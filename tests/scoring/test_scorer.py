"""The one path to a stamped score: checks run against the context and composed with the
suite's era and fingerprint; a suite whose arithmetic contradicts its declared severities
is refused before any check runs."""

from __future__ import annotations

from typing import Any

import pytest

from harness.scoring import Suite, graded
from harness.scoring.scorer import Scorer
from harness.scoring.selftest import SelftestFailed

pytestmark = pytest.mark.unit


def _suite(ran: list[str], **kw: Any) -> Suite:
    suite = Suite(name="app", version="1.0.0", tier_weights={"core": 0.7, "ui": 0.3}, **kw)

    def check(name: str) -> Any:
        def run(ctx: dict[str, float]) -> Any:
            ran.append(name)
            return graded(ctx[name])

        return run

    suite.add("boot", check("boot"), tier="core", harm="dead app")
    suite.add("list", check("list"), tier="core", harm="lost rows", root="boot")
    suite.add("layout", check("layout"), tier="ui", harm="misaligned")
    suite.add("total", check("total"), harm="wrong money", critical=True, severity="money")
    return suite


def test_a_context_is_scored_and_stamped() -> None:
    ran: list[str] = []
    scorer = Scorer(_suite(ran))
    score = scorer.score({"boot": 1.0, "list": 1.0, "layout": 1.0, "total": 0.5})
    assert sorted(ran) == ["boot", "layout", "list", "total"]
    assert score.era == scorer.stamp.era and score.fingerprint == scorer.stamp.fingerprint
    assert score.fingerprint and 0 < score.final < 1
    assert {r.check: r.score for r in score.rows}["total"] == 0.5
    again = scorer.score_rows(score.rows)
    assert again.final == score.final and again.era == score.era


def test_a_contradictory_suite_is_refused_before_any_check_runs() -> None:
    ran: list[str] = []
    # a money critical whose failure costs almost nothing: it no longer outranks a tier
    bad = _suite(ran, class_floors={"money": 0.99})
    with pytest.raises(SelftestFailed, match="money"):
        Scorer(bad).score({"boot": 1.0, "list": 1.0, "layout": 1.0, "total": 1.0})
    assert ran == []
