"""Success means every MUST of the SPEC is met: ids in the SPEC, checks that declare them,
defects that violate them, the MUSTS and COVERAGE controls, and the era's fingerprint."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from harness.errors import UserError
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
from harness.scoring import era as era_mod
from harness.scoring.coverage import static_coverage
from harness.scoring.must import spec_ids
from harness.verify.outcome import VerifyOutcome
from harness.verify.verdict import decide

pytestmark = pytest.mark.unit

SPEC = """# app
- The service MUST answer `/health` [M-RUN-1].
- Wait at least 0.2 s before the first retry [M-SYNC-1] and grow the pause 1.5x
  [M-SYNC-2].

Amounts are exact [M-MONEY-1]. See [M-RUN-1] again.
"""
T = Thresholds(calibrated=True, high=0.95, low=0.2, success_bar=0.9)


def _suite(tmp: Path, *, excellence: bool = False) -> Suite:
    (tmp / "SPEC.md").write_text(SPEC)
    suite = Suite(
        name="app",
        version="1.0.0",
        tier_weights={"core": 0.7, "ui": 0.3},
        excellence_weight=0.2 if excellence else 0.0,
        spec=tmp / "SPEC.md",
    )
    ok = lambda c: graded(1)  # noqa: E731
    suite.add("boot", ok, tier="core", harm="dead app", musts=("M-RUN-1",))
    suite.add("first", ok, tier="core", harm="storm", root="boot", musts=("M-SYNC-1",))
    suite.add(
        "growth",
        ok,
        tier="core",
        harm="storm",
        root="boot",
        musts=("M-SYNC-2",),
        tolerance=0.05,
        tolerance_why="one of twenty pauses may be measured short under load",
    )
    suite.add(
        "money", ok, harm="wrong money", critical=True, severity="money", musts=("M-MONEY-1",)
    )
    suite.add("layout", ok, tier="ui", harm="misaligned")
    suite.add("view", ok, harm="hidden rows", critical=True, severity="view")
    if excellence:
        suite.add("compact", ok, tier="excellence", harm="bytes")
    suite.validate()
    return suite


def _score(suite: Suite, **changes: float | Status) -> Score:
    rows = []
    for chk in suite.checks:
        c = changes.get(chk.name, 1.0)
        rows.append(chk.row_of(0.0, c) if isinstance(c, Status) else chk.row_of(c))
    return compose(mark_vacuous(rows), suite)


def test_spec_ids_are_read_in_order_with_their_text(tmp_path: Path) -> None:
    (tmp_path / "SPEC.md").write_text(SPEC)
    ids = spec_ids(tmp_path / "SPEC.md")
    assert list(ids) == ["M-RUN-1", "M-SYNC-1", "M-SYNC-2", "M-MONEY-1"]
    assert ids["M-SYNC-2"] == "and grow the pause 1.5x"
    (tmp_path / "BAD.md").write_text("wait [M-sync-1]\n")
    with pytest.raises(UserError, match="not a MUST id"):
        spec_ids(tmp_path / "BAD.md")


def test_a_suite_refuses_unknown_ids_untold_tolerances_and_musts_that_cannot_decide(
    tmp_path: Path,
) -> None:
    suite = _suite(tmp_path)
    ok = lambda c: graded(1)  # noqa: E731
    suite.add("typo", ok, tier="core", harm="x", musts=("M-RUN-9",))
    with pytest.raises(UserError, match="not in the SPEC"):
        suite.validate()
    with pytest.raises(UserError, match="tolerance_why"):
        suite.add("loose", ok, tier="core", harm="x", musts=("M-RUN-1",), tolerance=0.1)
    with pytest.raises(UserError, match="cannot carry MUST ids"):
        suite.add("diag", ok, tier="diagnostic", harm="x", musts=("M-RUN-1",))
    with pytest.raises(UserError, match="not a list of ids"):
        suite.add("str", ok, tier="core", harm="x", musts="M-RUN-1")


def test_one_violated_must_fails_although_the_graded_score_stays_high(tmp_path: Path) -> None:
    suite = _suite(tmp_path)
    perfect = _score(suite)
    assert perfect.spec_met is True and perfect.unmet == [] and perfect.final == 1.0
    slightly = _score(suite, first=0.99)
    assert slightly.final > 0.99 and slightly.spec_met is False
    assert slightly.unmet == ["M-SYNC-1"]
    failing = next(m for m in slightly.musts if m.id == "M-SYNC-1")
    assert failing.failing == ["first"]


def test_a_tolerance_is_the_checks_own_and_nothing_more(tmp_path: Path) -> None:
    suite = _suite(tmp_path)
    assert _score(suite, growth=0.95).spec_met is True
    assert _score(suite, growth=0.94).unmet == ["M-SYNC-2"]


def test_vacuous_unavailable_and_fired_criticals_are_not_met(tmp_path: Path) -> None:
    suite = _suite(tmp_path)
    dead = _score(suite, boot=Status.ABSENT)
    assert dead.unmet == ["M-RUN-1", "M-SYNC-1", "M-SYNC-2"]  # first and growth: vacuous
    gone = _score(suite, money=Status.UNAVAILABLE)
    assert gone.unmet == ["M-MONEY-1"]
    view = _score(suite, view=0.9)  # a critical without MUST ids still decides
    assert view.unmet == [] and view.fired == ["view"] and view.spec_met is False


def test_the_excellence_slice_never_decides_success(tmp_path: Path) -> None:
    suite = _suite(tmp_path, excellence=True)
    heavy = _score(suite, compact=0.0)
    assert heavy.final == pytest.approx(0.8) and heavy.spec_met is True
    outcome = VerifyOutcome(
        success=False,
        partial_score=None,
        rules=[],
        targets=[],
        changed_files=[],
        hidden_files=[],
        score=heavy.model_dump(mode="json"),
        bar=0.95,
    )
    assert decide(outcome).success  # the bar is not what decides
    broken = _score(suite, first=0.99).model_dump(mode="json")
    assert not decide(outcome.model_copy(update={"score": broken})).success


def test_a_suite_without_must_ids_keeps_its_bar(tmp_path: Path) -> None:
    suite = Suite(name="old", version="1.0.0", tier_weights={"core": 1.0})
    suite.add("a", lambda c: graded(1), tier="core", harm="x")
    score = compose([suite.get("a").row_of(0.96)], suite)
    assert score.spec_met is None
    outcome = VerifyOutcome(
        success=False,
        partial_score=None,
        rules=[],
        targets=[],
        changed_files=[],
        hidden_files=[],
        score=score.model_dump(mode="json"),
        bar=0.95,
    )
    assert decide(outcome).success
    assert not decide(outcome.model_copy(update={"bar": 0.97})).success


def _defect(
    suite: Suite, name: str, violates: list[str], **changes: float | Status
) -> DefectOutcome:
    return DefectOutcome(
        name=name, declared=list(changes), score=_score(suite, **changes), violates=violates
    )


def _controls(suite: Suite, defects: list[DefectOutcome]) -> object:
    high = _score(suite)
    low = _score(suite, boot=Status.ABSENT, money=0.0, view=0.0, layout=0.0)
    return evaluate_controls(high, low, defects, (high.vector(), high.vector()), T)


def _exact(suite: Suite) -> list[DefectOutcome]:
    return [
        _defect(suite, "healthz", ["M-RUN-1"], boot=Status.ABSENT),
        _defect(suite, "first-0.16", ["M-SYNC-1"], first=0.0),
        _defect(suite, "x1.4", ["M-SYNC-2"], growth=0.5),
        _defect(suite, "float", ["M-MONEY-1"], money=0.0),
        _defect(suite, "footer", [], view=0.0),
    ]


def test_every_must_violated_alone_by_a_failing_defect_is_trusted(tmp_path: Path) -> None:
    suite = _suite(tmp_path)
    report = _controls(suite, _exact(suite))
    assert report.verdict == TRUSTED, report.text()  # type: ignore[attr-defined]
    names = [c.control for c in report.controls]  # type: ignore[attr-defined]
    assert "MUSTS" in names and "COVERAGE" in names


def test_coverage_refuses_a_must_without_an_exact_failing_defect(tmp_path: Path) -> None:
    suite = _suite(tmp_path)
    defects = [d for d in _exact(suite) if d.name != "x1.4"]
    report = _controls(suite, defects)
    assert report.verdict == NOT_TRUSTED  # type: ignore[attr-defined]
    cov = next(c for c in report.controls if c.control == "COVERAGE")  # type: ignore[attr-defined]
    assert not cov.passed and "M-SYNC-2 (NO DEFECT)" in cov.detail
    # a defect that claims the violation but still succeeds proves nothing
    mild = _defect(suite, "x1.45", ["M-SYNC-2"], growth=0.96)
    report = _controls(suite, [*defects, mild])
    musts = next(c for c in report.controls if c.control == "MUSTS")  # type: ignore[attr-defined]
    assert not musts.passed and "x1.45" in musts.detail
    assert report.verdict == NOT_TRUSTED  # type: ignore[attr-defined]


def test_static_coverage_names_the_hole() -> None:
    rows = static_coverage(
        {"M-A-1": "", "M-A-2": "", "M-A-3": ""},
        {"a": ("M-A-1", "M-A-2")},
        {"d1": ["M-A-1"], "d2": ["M-A-1", "M-A-2"]},
    )
    assert [r.problem for r in rows] == [None, "NO DEFECT", "NO CHECK"]


def test_the_era_fingerprint_covers_the_app_kit_and_a_recalibration_is_needed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = _suite(tmp_path)
    kit = tmp_path / "appkit"
    shutil.copytree(era_mod.FRAMEWORK[0], kit)  # the app kit
    monkeypatch.setattr(era_mod, "FRAMEWORK", (kit,))
    before = era_mod.code_fingerprint(suite)
    thresholds = tmp_path / "thresholds.yml"
    thresholds.write_text(
        yaml.safe_dump({"calibrated": True, "high": 0.9, "low": 0.2, "scorer": before})
    )
    suite.thresholds = thresholds
    suite.thresholds_pin = era_mod.sha256_file(thresholds)
    assert era_mod.stamp(suite).era == "app@1.0.0"
    (kit / "mockdep.py").write_text((kit / "mockdep.py").read_text() + "\n# retuned\n")
    assert era_mod.code_fingerprint(suite) != before
    moved = era_mod.stamp(suite)
    assert moved.era == "app@1.0.0-rc" and not moved.calibrated
