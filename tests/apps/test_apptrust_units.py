"""Executed-app trust, the fast parts: the scorer slot, controls with teeth."""

from __future__ import annotations

from pathlib import Path

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

T = Thresholds(calibrated=True, high=0.95, low=0.2, success_bar=0.9)


def _suite() -> Suite:
    suite = Suite(name="app", version="1.0.0", tier_weights={"core": 0.7, "ui": 0.3})
    ok = lambda c: graded(1)  # noqa: E731
    suite.add("boot", ok, tier="core", harm="dead app")
    suite.add("list", ok, tier="core", harm="lost rows", root="boot")
    suite.add("total", ok, harm="wrong money", critical=True, severity="money")
    suite.add("layout", ok, tier="ui", harm="misaligned")
    suite.add("idle", ok, tier="ui", harm="never moved by anything")
    return suite


SUITE = _suite()


def _score(**changes: float | Status) -> Score:
    rows = []
    for chk in SUITE.checks:
        c = changes.get(chk.name, 1.0)
        rows.append(chk.row_of(0.0, c) if isinstance(c, Status) else chk.row_of(c))
    return compose(mark_vacuous(rows), SUITE)


def _controls(defects: list[DefectOutcome], low: Score | None = None) -> object:
    high = _score()
    low = low or _score(boot=Status.ABSENT, total=0.0, layout=0.0)
    return evaluate_controls(
        high,
        low,
        defects,
        (high.vector(), high.vector()),
        T,
        failing_determinism=(low.vector(), low.vector()),
    )


def test_critical_defect_at_or_above_the_bar_is_not_trusted() -> None:
    # the defect breaks only what it declares (isolation passes) but its final stays
    # above the success bar: a critical defect that counts as success
    mild = DefectOutcome(
        name="mild-money", declared=["total"], score=_score(total=0.97), critical=True
    )
    report = _controls([mild])
    assert report.verdict == NOT_TRUSTED  # type: ignore[attr-defined]
    crit = next(c for c in report.controls if c.control == "CRITICAL")  # type: ignore[attr-defined]
    assert not crit.passed and "mild-money" in crit.detail
    assert report.defects[0].final == pytest.approx(_score(total=0.97).final)  # type: ignore[attr-defined]
    assert report.defects[0].success  # type: ignore[attr-defined]


def test_critical_defect_below_the_bar_is_trusted_and_every_score_is_kept() -> None:
    hard = DefectOutcome(name="money", declared=["total"], score=_score(total=0.0), critical=True)
    soft = DefectOutcome(name="ugly", declared=["layout"], score=_score(layout=0.0))
    report = _controls([hard, soft])
    assert report.verdict == TRUSTED, report.text()  # type: ignore[attr-defined]
    assert [d.final for d in report.defects] == [hard.score.final, soft.score.final]  # type: ignore[attr-defined]


def test_low_tree_above_the_bar_fails_low() -> None:
    report = _controls([], low=_score(layout=0.5))
    low = next(c for c in report.controls if c.control == "LOW")  # type: ignore[attr-defined]
    assert not low.passed and report.verdict == NOT_TRUSTED  # type: ignore[attr-defined]


def test_determinism_is_checked_on_the_failing_tree_too() -> None:
    high, low = _score(), _score(boot=Status.ABSENT, total=0.0, layout=0.0)
    report = evaluate_controls(
        high,
        low,
        [],
        (high.vector(), high.vector()),
        T,
        failing_determinism=(low.vector(), _score(boot=Status.ABSENT, total=0.5).vector()),
    )
    det = [c for c in report.controls if c.control == "DETERMINISM"]
    assert len(det) == 2 and det[0].passed and not det[1].passed
    assert "failing tree" in det[1].detail and report.verdict == NOT_TRUSTED


def test_a_check_nothing_moves_is_reported_untested() -> None:
    soft = DefectOutcome(name="ugly", declared=["layout"], score=_score(layout=0.0))
    report = _controls([soft])
    assert any("idle" in w for w in report.warnings)  # type: ignore[attr-defined]
    assert not any("layout" in w for w in report.warnings)  # type: ignore[attr-defined]


def test_an_unprivileged_scorer_says_confinement_is_not_enforced(tmp_path: Path) -> None:
    from harness.appkit.jail import Jail, protecting, reachable_by_others

    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "a.py").write_text("x = 1\n")
    secret = tmp_path / "secret"
    secret.mkdir(mode=0o700)
    assert not reachable_by_others(secret)
    with protecting([secret]):
        jail = Jail(tree, mode="none")
    try:
        assert "NOT enforced" in jail.statement()
        assert (jail.tree / "pkg" / "a.py").is_file() and jail.data.is_dir()
        assert secret.resolve() in jail.hidden
        env = jail.env()
        assert "HARNESS_SEED" not in env and "PYTHONPATH" not in env
        assert jail.wrap(["python3", "-V"]) == ["python3", "-V"]
    finally:
        jail.close()
    assert not jail.home.exists()
