"""Severity selftest: good suites pass, inverted or perverse ones refuse to score."""

from __future__ import annotations

import math
from itertools import pairwise

import pytest

from harness.scoring import (
    Row,
    Scorer,
    SelftestFailed,
    Status,
    Suite,
    compose,
    graded,
    mark_vacuous,
    selftest,
)

pytestmark = pytest.mark.unit

RANKING = ["money", "console", "cosmetic"]


def _suite(
    weights: dict[str, float] | None = None, ran: list[str] | None = None, **kw: object
) -> Suite:
    suite = Suite(
        name="app",
        version="1.0.0",
        tier_weights=weights or {"core": 0.6, "console": 0.25, "cosmetic": 0.15},
        **kw,
    )

    def ok(ctx: object) -> object:
        if ran is not None:
            ran.append("check")
        return graded(1)

    suite.add("boot", ok, tier="core", harm="dead app")
    suite.add("list", ok, tier="core", harm="lost rows", root="boot")
    suite.add("money", ok, harm="wrong money", critical=True, severity="money")
    suite.add("console", ok, tier="console", harm="console errors")
    suite.add("align", ok, tier="cosmetic", harm="misaligned")
    suite.add("contrast", ok, tier="cosmetic", harm="low contrast")
    suite.add("timing", ok, tier="diagnostic", harm="slow (diagnostic)")
    return suite


def test_sound_suite_passes_and_scores() -> None:
    suite = _suite(severity_ranking=RANKING)
    selftest(suite)
    score = Scorer(suite).score(None)
    assert score.final == 1.0 and score.era == "app@1.0.0" and len(score.fingerprint or "") == 64


def test_inverted_weight_refuses_to_score() -> None:
    ran: list[str] = []
    suite = _suite({"core": 0.6, "console": 0.05, "cosmetic": 0.35}, ran, severity_ranking=RANKING)
    with pytest.raises(SelftestFailed) as err:
        Scorer(suite).score(None)
    assert "console (console) costs 0.0500, not more than align (cosmetic)" in str(err.value)
    assert err.value.exit_code == 2
    assert ran == []  # refused before any check ran


def test_weak_critical_floor_refuses() -> None:
    suite = _suite(critical_floor=0.95)
    with pytest.raises(SelftestFailed) as err:
        selftest(suite)
    assert any("not more than all cosmetic" in f for f in err.value.failures)


def test_ranking_class_without_checks_refuses() -> None:
    with pytest.raises(SelftestFailed, match="has no checks"):
        selftest(_suite(severity_ranking=["money", "security", "cosmetic"]))


def test_gate_that_rewards_worse_work_breaks_monotonicity() -> None:
    suite = _suite(excellence_weight=0.1, gates=["contrast < 0.5"])
    with pytest.raises(SelftestFailed) as err:
        selftest(suite)
    assert any("raising its score" in f for f in err.value.failures)


def test_gate_on_diagnostic_check_is_caught() -> None:
    suite = _suite(excellence_weight=0.1, gates=["timing >= 0.5"])
    with pytest.raises(SelftestFailed) as err:
        selftest(suite)
    assert "diagnostic timing changes the score" in err.value.failures


def _rows(suite: Suite, changes: dict[str, float | Status]) -> list[Row]:
    rows = []
    for chk in suite.checks:
        c = changes.get(chk.name, 1.0)
        rows.append(chk.row_of(0.0, c) if isinstance(c, Status) else chk.row_of(c))
    return mark_vacuous(rows)


WEIGHTS = [
    {"core": 0.6, "console": 0.25, "cosmetic": 0.15},
    {"core": 0.8, "console": 0.15, "cosmetic": 0.05},
    {"core": 0.4, "console": 0.35, "cosmetic": 0.25},
]


def test_property_sweeps_over_weights_and_floors() -> None:
    """Plain-loop property sweep: the selftest's claims hold for compose() directly."""
    for weights in WEIGHTS:
        for floor in (0.0, 0.3, 0.6, 0.8):
            suite = _suite(weights, critical_floor=floor)
            names = [c.name for c in suite.checks if c.tier != "diagnostic"]
            for name in names:
                finals = [compose(_rows(suite, {name: s / 20}), suite).final for s in range(21)]
                assert all(b >= a - 1e-12 for a, b in pairwise(finals))
                zero = compose(_rows(suite, {name: 0.0}), suite).final
                gone = compose(_rows(suite, {name: Status.UNAVAILABLE}), suite).final
                missing = compose(_rows(suite, {name: Status.ABSENT}), suite).final
                half = compose(_rows(suite, {name: 0.5}), suite).final
                assert gone > zero and missing < half, (weights, floor, name)
            money = compose(_rows(suite, {"money": 0.0}), suite).final
            assert math.isclose(money, floor)


def test_selftest_accepts_every_sound_configuration() -> None:
    for weights in WEIGHTS:
        for floor in (0.0, 0.3, 0.6):
            selftest(_suite(weights, critical_floor=floor, severity_ranking=RANKING))
    # and refuses the configuration where console weighs less per check than cosmetic
    with pytest.raises(SelftestFailed):
        selftest(_suite({"core": 0.7, "console": 0.1, "cosmetic": 0.2}, severity_ranking=RANKING))
