"""``compose()`` arithmetic on synthetic rows, and the text/JSON renderings."""

from __future__ import annotations

import math

import pytest

from harness.scoring import (
    Row,
    Status,
    Suite,
    compose,
    graded,
    mark_vacuous,
    render_json,
    render_text,
)

pytestmark = pytest.mark.unit


def _suite(**kw: object) -> Suite:
    suite = Suite(
        name="app",
        version="2.1.0",
        tier_weights={"core": 0.6, "console": 0.25, "cosmetic": 0.15},
        **kw,
    )
    ok = lambda c: graded(1)  # noqa: E731
    suite.add("boot", ok, tier="core", harm="dead app: nothing starts")
    suite.add("list", ok, tier="core", harm="lost data: rows missing", root="boot")
    suite.add(
        "money",
        ok,
        harm="wrong money: exponent misapplied",
        critical=True,
        severity="money",
        root="boot",
    )
    suite.add("persist", ok, harm="lost data: restart drops rows", critical=True, severity="data")
    suite.add("console", ok, tier="console", harm="console errors: broken scripts")
    suite.add("align", ok, tier="cosmetic", harm="ugly: misaligned columns")
    suite.add("contrast", ok, tier="cosmetic", harm="unreadable: low contrast")
    suite.add("timing", ok, tier="diagnostic", harm="slow page: diagnostic only")
    return suite


def _rows(suite: Suite, **changes: float | Status) -> list[Row]:
    rows = []
    for chk in suite.checks:
        change = changes.get(chk.name, 1.0)
        rows.append(chk.row_of(0.0, change) if isinstance(change, Status) else chk.row_of(change))
    return mark_vacuous(rows)


def test_perfect_rows_score_one() -> None:
    suite = _suite()
    score = compose(_rows(suite), suite)
    assert math.isclose(score.final, 1.0) and score.factors and score.measurable
    assert score.era == "app@2.1.0"


def test_tier_means_are_weighted_and_unavailable_is_excluded() -> None:
    suite = _suite()
    score = compose(_rows(suite, align=0.5, contrast=Status.UNAVAILABLE), suite)
    assert score.tier_means["cosmetic"] == 0.5
    assert math.isclose(score.inner, 0.6 + 0.25 + 0.15 * 0.5)
    assert score.unavailable == ["contrast"]
    gone = compose(_rows(suite, console=Status.UNAVAILABLE), suite)
    assert gone.tier_means["console"] is None
    assert math.isclose(gone.inner, 1.0)  # renormalised over measured tiers


def test_diagnostic_rows_have_weight_zero() -> None:
    suite = _suite()
    assert compose(_rows(suite, timing=0.0), suite).final == compose(_rows(suite), suite).final


def test_criticals_multiply_and_compound() -> None:
    suite = _suite(class_floors={"data": 0.5})
    for money in (0.0, 0.3, 1.0):
        for persist in (0.0, 0.5, 1.0):
            score = compose(_rows(suite, money=money, persist=persist), suite)
            expected = (0.6 + 0.4 * money) * (0.5 + 0.5 * persist)
            assert math.isclose(score.final, expected), (money, persist)
            assert {f.check: f.floor for f in score.factors} == {"money": 0.6, "persist": 0.5}


def test_unavailable_critical_is_not_a_factor() -> None:
    suite = _suite()
    score = compose(_rows(suite, money=Status.UNAVAILABLE), suite)
    assert [f.check for f in score.factors] == ["persist"] and score.final == 1.0


def test_failed_root_multiplies_once() -> None:
    suite = _suite()
    score = compose(_rows(suite, boot=Status.ABSENT), suite)
    assert [b.model_dump() for b in score.blocks] == [
        {
            "root": "boot",
            "downstream": ["list", "money"],
            "note": "2 further checks are downstream of boot: one defect, not 3",
        }
    ]
    money = [f for f in score.factors if f.check == "money"]
    assert len(money) == 1 and money[0].factor == 0.6
    # the core tier is all zero (boot absent, list vacuous): inner loses the core weight
    assert math.isclose(score.final, (0.25 + 0.15) * 0.6)


def test_critical_root_folds_downstream_criticals() -> None:
    suite = Suite(name="r", version="1.0.0", tier_weights={"core": 1.0})
    ok = lambda c: graded(1)  # noqa: E731
    suite.add("auth", ok, harm="anyone logs in", critical=True, severity="security")
    suite.add("pay", ok, harm="wrong money", critical=True, severity="money", root="auth")
    suite.add("page", ok, tier="core", harm="h", root="pay")
    suite.add("other", ok, tier="core", harm="h")
    rows = mark_vacuous([c.row_of(s) for c, s in zip(suite.checks, [0.0, 1, 1, 1], strict=True)])
    score = compose(rows, suite)
    assert len(score.factors) == 1
    assert score.factors[0].check == "auth" and score.factors[0].covers == ["pay"]
    assert math.isclose(score.final, 0.5 * 0.6)


def test_excellence_slice_follows_gates() -> None:
    suite = Suite(
        name="e",
        version="1.0.0",
        tier_weights={"core": 1.0},
        excellence_weight=0.2,
        gates=["core >= 0.9", "polish > 0.5"],
    )
    suite.add("polish", lambda c: graded(1), tier="core", harm="h")
    suite.add("extra", lambda c: graded(1), tier="excellence", harm="h")
    for polish, extra, gate in ((1.0, 1.0, 1.0), (0.6, 0.5, 0.5), (0.4, 1.0, 0.0)):
        rows = [suite.get("polish").row_of(polish), suite.get("extra").row_of(extra)]
        score = compose(rows, suite)
        assert score.gate == gate and score.excellence == extra
        assert math.isclose(score.final, 0.8 * polish + 0.2 * gate * extra)
    rows = [suite.get("polish").row_of(0.5), suite.get("extra").row_of(0, Status.UNAVAILABLE)]
    assert compose(rows, suite).final == 0.5  # unmeasured slice folds back into inner


def test_nothing_measurable_is_flagged() -> None:
    suite = Suite(name="n", version="1.0.0", tier_weights={"core": 1.0})
    chk = suite.add("a", lambda c: graded(1), tier="core", harm="h")
    score = compose([chk.row_of(0.0, Status.UNAVAILABLE)], suite)
    assert not score.measurable and score.final == 0.0


def test_text_shows_arithmetic_harm_status_and_era() -> None:
    suite = _suite()
    score = compose(
        _rows(suite, boot=Status.ABSENT, align=0.5, console=Status.UNAVAILABLE),
        suite,
        era="app@2.1.0",
        fingerprint="f" * 64,
    )
    text = render_text(score)
    for needle in (
        "era app@2.1.0",
        "inner",
        "gate",
        "excellence",
        "final",
        "money [money]: 0.6 + 0.4 x 0.0000",
        "[absent] boot",
        "dead app: nothing starts",
        "[vacuous] list",
        "ugly: misaligned columns",
        "one defect, not 3",
        "unavailable (excluded",
        f"{score.final:.4f}",
    ):
        assert needle in text, needle
    assert "contrast" not in text  # rows at 1.0 are not listed
    data = render_json(score)
    assert data["era"] == "app@2.1.0" and data["final"] == score.final
    assert data["blocks"][0]["note"].startswith("2 further checks")
    assert {r["check"] for r in data["rows"]} == {c.name for c in suite.checks}
