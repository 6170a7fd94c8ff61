"""Controls verdict arithmetic: HIGH, LOW, ISOLATION (with cascades), DETERMINISM."""

from __future__ import annotations

import pytest

from harness.scoring import (
    NOT_TRUSTED,
    TRUSTED,
    DefectOutcome,
    Score,
    Status,
    Suite,
    Thresholds,
    compose,
    evaluate_controls,
    graded,
    mark_vacuous,
)

pytestmark = pytest.mark.unit

T = Thresholds(calibrated=True, high=0.9, low=0.2, epsilon=0.01)


def _suite() -> Suite:
    suite = Suite(name="app", version="1.0.0", tier_weights={"core": 0.7, "ui": 0.3})
    ok = lambda c: graded(1)  # noqa: E731
    suite.add("boot", ok, tier="core", harm="dead app")
    suite.add("list", ok, tier="core", harm="lost rows", root="boot")
    suite.add("total", ok, harm="wrong money", critical=True, severity="money")
    suite.add("layout", ok, tier="ui", harm="misaligned")
    suite.add("speed", ok, tier="diagnostic", harm="slow")
    return suite


SUITE = _suite()


def _score(**changes: float | Status) -> Score:
    rows = []
    for chk in SUITE.checks:
        c = changes.get(chk.name, 1.0)
        rows.append(chk.row_of(0.0, c) if isinstance(c, Status) else chk.row_of(c))
    return compose(mark_vacuous(rows), SUITE)


def _low() -> Score:
    return _score(boot=Status.ABSENT, total=0.0, layout=0.0)


def test_all_controls_pass_gives_trusted() -> None:
    high = _score()
    defects = [
        DefectOutcome(name="money-exponent", declared=["total"], score=_score(total=0.3)),
        DefectOutcome(name="no-boot", declared=["boot"], score=_score(boot=Status.ABSENT)),
        DefectOutcome(name="ugly", declared=["layout"], score=_score(layout=0.5, speed=0.0)),
    ]
    report = evaluate_controls(high, _low(), defects, (high.vector(), _score().vector()), T)
    assert report.verdict == TRUSTED and report.trusted
    assert [c.control for c in report.controls] == ["HIGH", "LOW", "ISOLATION", "DETERMINISM"]
    no_boot = report.defects[1]
    assert no_boot.broken == ["boot", "list"] and no_boot.cascades == []  # downstream excused
    assert TRUSTED in report.text()


def test_cascade_fails_isolation() -> None:
    high = _score()
    leaky = DefectOutcome(name="leaky", declared=["total"], score=_score(total=0.0, layout=0.9))
    report = evaluate_controls(high, _low(), [leaky], (high.vector(), high.vector()), T)
    assert report.verdict == NOT_TRUSTED
    assert report.defects[0].cascades == ["layout"] and not report.defects[0].passed
    assert "cascades ['layout']" in report.text()


@pytest.mark.parametrize("layout", [1.0, 0.9])
def test_a_racy_side_effect_is_excused_whether_or_not_it_broke(layout: float) -> None:
    """``may_break``: two walks racing break the order on one machine and not on the
    other; either run isolates, and nothing else is excused."""
    high = _score()
    racy = DefectOutcome(
        name="racy",
        declared=["total"],
        may_break=["layout"],
        score=_score(total=0.0, layout=layout),
    )
    report = evaluate_controls(high, _low(), [racy], (high.vector(), high.vector()), T)
    assert report.defects[0].cascades == [] and report.defects[0].missed == []
    assert report.verdict == TRUSTED
    leaky = racy.model_copy(update={"score": _score(total=0.0, layout=layout, boot=0.0)})
    report = evaluate_controls(high, _low(), [leaky], (high.vector(), high.vector()), T)
    assert report.defects[0].cascades == ["boot", "list"] and report.verdict == NOT_TRUSTED
    typo = racy.model_copy(update={"may_break": ["layot"]})
    report = evaluate_controls(high, _low(), [typo], (high.vector(), high.vector()), T)
    assert report.defects[0].unknown == ["layot"] and report.verdict == NOT_TRUSTED


def test_epsilon_tolerates_small_drops_and_missed_checks_fail() -> None:
    high = _score()
    tiny = DefectOutcome(name="tiny", declared=["total"], score=_score(total=0.995))
    result = evaluate_controls(high, _low(), [tiny], (high.vector(), high.vector()), T)
    assert result.defects[0].missed == ["total"] and result.verdict == NOT_TRUSTED
    noise = DefectOutcome(name="n", declared=["total"], score=_score(total=0.0, layout=0.995))
    result = evaluate_controls(high, _low(), [noise], (high.vector(), high.vector()), T)
    assert result.defects[0].cascades == [] and result.verdict == TRUSTED


def test_a_declared_test_target_breaks_with_one_failing_test() -> None:
    # a test target passes only when all its tests pass: 1,784 of 1,785 is a break
    strict = T.model_copy(update={"declared_epsilon": 0.0})
    high = _score()
    one_case = DefectOutcome(name="one", declared=["total"], score=_score(total=1784 / 1785))
    result = evaluate_controls(high, _low(), [one_case], (high.vector(), high.vector()), strict)
    assert result.defects[0].broken == ["total"] and result.defects[0].missed == []
    assert result.verdict == TRUSTED
    # undeclared checks still cascade only past epsilon; a big drop still cascades
    small = _score(total=0.0, layout=0.995)
    noise = DefectOutcome(name="n", declared=["total"], score=small)
    result = evaluate_controls(high, _low(), [noise], (high.vector(), high.vector()), strict)
    assert result.defects[0].cascades == [] and result.verdict == TRUSTED
    leaky = DefectOutcome(name="l", declared=["total"], score=_score(total=0.0, layout=0.9))
    result = evaluate_controls(high, _low(), [leaky], (high.vector(), high.vector()), strict)
    assert result.defects[0].cascades == ["layout"] and result.verdict == NOT_TRUSTED
    # without declared_epsilon the same tiny drop is missed (app suites keep epsilon)
    result = evaluate_controls(high, _low(), [one_case], (high.vector(), high.vector()), T)
    assert result.defects[0].missed == ["total"]


def test_test_based_scenarios_prove_declared_targets_strictly() -> None:
    from harness.verify.proof import TEST_SUITE_THRESHOLDS

    assert TEST_SUITE_THRESHOLDS.declared_epsilon == 0.0
    assert TEST_SUITE_THRESHOLDS.epsilon == 0.01
    # a defect tree with one failing test of thousands is not shown as a success
    assert TEST_SUITE_THRESHOLDS.bar == 1.0
    high = _score()
    one_case = DefectOutcome(name="one", declared=["total"], score=_score(total=1784 / 1785))
    strict = T.model_copy(update={"declared_epsilon": 0.0, "success_bar": 1.0})
    result = evaluate_controls(high, _low(), [one_case], (high.vector(), high.vector()), strict)
    assert result.defects[0].success is False and "SUCCESS" not in result.text()


def test_unknown_declared_check_and_unavailable_rows() -> None:
    high = _score()
    bad = DefectOutcome(name="typo", declared=["totl"], score=_score(total=0.0))
    unav = DefectOutcome(
        name="u", declared=["total"], score=_score(total=0.0, layout=Status.UNAVAILABLE)
    )
    report = evaluate_controls(high, _low(), [bad, unav], (high.vector(), high.vector()), T)
    assert report.defects[0].unknown == ["totl"] and report.defects[0].cascades == ["total"]
    assert report.defects[1].cascades == ["layout"]  # a check that broke is not excused


def test_high_low_and_determinism_failures() -> None:
    mediocre = _score(layout=0.5, total=0.8)  # 0.85 x 0.92 < 0.9
    report = evaluate_controls(mediocre, _score(), [], (_score().vector(), _score().vector()), T)
    by = {c.control: c.passed for c in report.controls}
    assert by == {"HIGH": False, "LOW": False, "ISOLATION": True, "DETERMINISM": True}
    assert "isolation not exercised" in report.text()
    high = _score(layout=Status.UNAVAILABLE)
    report = evaluate_controls(high, _low(), [], (high.vector(), high.vector()), T)
    assert not report.controls[0].passed and "unavailable: layout" in report.controls[0].detail
    first, second = _score().vector(), _score(layout=0.99).vector()
    report = evaluate_controls(_score(), _low(), [], (first, second), T)
    assert report.verdict == NOT_TRUSTED and "layout 1.0 -> 0.99" in report.controls[3].detail


def test_scores_from_two_eras_are_not_trusted() -> None:
    high = _score()
    low = _low().model_copy(update={"era": "app@0.9.0"})
    report = evaluate_controls(high, low, [], (high.vector(), high.vector()), T)
    assert report.controls[-1].control == "ERA" and report.verdict == NOT_TRUSTED
