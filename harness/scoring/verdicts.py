"""Controls that prove the grader, as pure verdict arithmetic over scores.

HIGH: the reference tree scores at least ``thresholds.high`` with nothing unavailable.
LOW: the LOW tree (a running-but-broken build for app scenarios, the do-nothing tree
otherwise) scores at most ``thresholds.low`` and below the success bar. ISOLATION: each
defect, applied to a copy of the reference, breaks every check it declares and nothing
else (checks downstream of a declared check are excused, and so are the checks a racy
defect declares it ``may_break`` and theirs; diagnostic rows are ignored);
a check is broken when its score falls more than ``thresholds.epsilon`` below the
reference, or it becomes unavailable. CRITICAL: a defect marked critical scores below
the success bar. DETERMINISM: scoring one tree twice gives the same vector, for the
reference and for a failing tree. Every defect's final score is kept; a check that
neither LOW nor any defect moves is reported as untested (saturation warning, not a
failure). When the SPEC carries MUST ids, success means every MUST met: HIGH needs the
reference to meet them all, MUSTS needs each defect declaring ``violates`` to fail with
those ids unmet, COVERAGE needs every id verified by a check and violated alone by a
failing defect. All scores must come from one era. The caller does the I/O and passes scores.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, Field

from harness.scoring.compose import Score
from harness.scoring.coverage import static_coverage, succeeds, unknown_ids, violation_proven
from harness.scoring.era import Thresholds
from harness.scoring.rows import DIAGNOSTIC, Row, Status

Vector = dict[str, float | None]
TRUSTED = "GRADER TRUSTED"
NOT_TRUSTED = "GRADER NOT TRUSTED"


class DefectOutcome(BaseModel):
    """A defect's name, the checks it declares it breaks, and its tree's score."""

    name: str
    declared: list[str]
    score: Score
    critical: bool = False
    violates: list[str] = Field(default_factory=list, description="SPEC ids it violates")
    may_break: list[str] = Field(
        default_factory=list,
        description="checks a racy mistake breaks on some runs only: never missed nor a cascade",
    )


class DefectResult(BaseModel):
    name: str
    declared: list[str]
    broken: list[str]
    missed: list[str] = Field(description="declared but not broken")
    cascades: list[str] = Field(description="broken but not declared")
    unknown: list[str] = Field(description="declared names the suite does not have")
    passed: bool
    final: float | None = None
    critical: bool = False
    success: bool | None = Field(default=None, description="the tree's trial verdict")
    violates: list[str] = Field(default_factory=list)
    unmet: list[str] = Field(default_factory=list, description="SPEC ids the tree left unmet")


class ControlResult(BaseModel):
    control: Literal[
        "HIGH",
        "LOW",
        "ISOLATION",
        "CRITICAL",
        "MUSTS",
        "COVERAGE",
        "DETERMINISM",
        "ERA",
        "MUTATION",
    ]
    passed: bool
    detail: str


class ControlsReport(BaseModel):
    era: str
    controls: list[ControlResult]
    defects: list[DefectResult]
    verdict: str
    warnings: list[str] = Field(default_factory=list)

    @property
    def trusted(self) -> bool:
        return self.verdict == TRUSTED

    def text(self) -> str:
        """One line per control, one per failing defect, then the verdict."""
        lines = [f"controls for {self.era}"]
        for c in self.controls:
            lines.append(f"  {c.control:<11} {'pass' if c.passed else 'FAIL'}  {c.detail}")
        for d in self.defects:
            final = "" if d.final is None else f"{d.final:.4f}"
            tag = " critical" if d.critical else ""
            ok = (
                "ok"
                if d.passed
                else f"missed {d.missed}, cascades {d.cascades}, unknown {d.unknown}"
            )
            if d.violates:
                ok += f"; violates {d.violates}, unmet {d.unmet}"
            lines.append(
                f"  defect {d.name:<24} {final}{tag}{' SUCCESS' if d.success else ''}  {ok}"
            )
        for w in self.warnings:
            lines.append(f"  warning: {w}")
        lines.append(self.verdict)
        return "\n".join(lines) + "\n"


def evaluate_controls(
    high: Score,
    low: Score,
    isolation: list[DefectOutcome],
    determinism: tuple[Vector, Vector],
    thresholds: Thresholds,
    *,
    failing_determinism: tuple[Vector, Vector] | None = None,
) -> ControlsReport:
    """Judge the controls and return per-control results, warnings and the verdict."""
    bar = thresholds.bar
    declared_eps = thresholds.declared_epsilon
    defects = [judge_defect(high, d, thresholds.epsilon, bar, declared_eps) for d in isolation]
    controls = [
        _high(high, thresholds),
        _low(low, thresholds),
        _isolation(defects),
    ]
    if any(d.critical for d in defects):
        controls.append(_critical(defects, bar))
    if high.spec_met is not None:
        controls.extend(_musts(high, isolation, defects, bar))
    controls.append(_determinism(*determinism))
    if failing_determinism is not None:
        failing = _determinism(*failing_determinism)
        failing.detail = f"failing tree: {failing.detail}"
        controls.append(failing)
    eras = {high.era, low.era, *(d.score.era for d in isolation)}
    if len(eras) > 1:
        controls.append(
            ControlResult(
                control="ERA", passed=False, detail=f"scores come from several eras: {sorted(eras)}"
            )
        )
    verdict = TRUSTED if all(c.passed for c in controls) else NOT_TRUSTED
    return ControlsReport(
        era=high.era,
        controls=controls,
        defects=defects,
        verdict=verdict,
        warnings=saturation(high, [low, *(d.score for d in isolation)], thresholds.epsilon),
    )


def saturation(reference: Score, others: list[Score], epsilon: float) -> list[str]:
    """Checks that no LOW or defect tree moves: nothing proves they can fail."""
    moved: set[str] = set()
    for other in others:
        moved.update(broken_checks(reference, other, epsilon))
    idle = [
        r.check
        for r in reference.rows
        if r.tier != DIAGNOSTIC and r.counts and r.check not in moved
    ]
    return [f"untested check {c}: neither LOW nor any defect moves it" for c in idle]


def broken_checks(reference: Score, other: Score, epsilon: float) -> list[str]:
    """Checks measured on the reference that dropped by more than ``epsilon`` in ``other``."""
    theirs = {r.check: r for r in other.rows}
    out = []
    for ref in reference.rows:
        if ref.tier == DIAGNOSTIC or not ref.counts:
            continue
        row = theirs.get(ref.check)
        if row is None or row.status is Status.UNAVAILABLE or ref.score - row.score > epsilon:
            out.append(ref.check)
    return out


def judge_defect(
    reference: Score,
    defect: DefectOutcome,
    epsilon: float,
    bar: float | None = None,
    declared_epsilon: float | None = None,
) -> DefectResult:
    """Compare one defect tree with the reference tree (and with the success bar).

    A declared check is broken when it drops past ``declared_epsilon`` (default
    ``epsilon``): a test target with one failing test among thousands fails its trial,
    so it is broken; an undeclared check is a cascade only past ``epsilon``."""
    names = {r.check for r in reference.rows}
    broken = broken_checks(reference, defect.score, epsilon)
    if declared_epsilon is not None:
        strict = broken_checks(reference, defect.score, declared_epsilon)
        declared = [n for n in strict if n in defect.declared and n not in broken]
        broken = [r.check for r in reference.rows if r.check in {*broken, *declared}]
    excused = _closure({*defect.declared, *defect.may_break}, reference.rows)
    unknown = [n for n in (*defect.declared, *defect.may_break) if n not in names]
    missed = [n for n in defect.declared if n in names and n not in broken]
    cascades = [n for n in broken if n not in excused]
    return DefectResult(
        name=defect.name,
        declared=list(defect.declared),
        broken=broken,
        missed=missed,
        cascades=cascades,
        unknown=unknown,
        passed=bool(defect.declared) and not (missed or cascades or unknown),
        final=defect.score.final,
        critical=defect.critical,
        success=None if bar is None else succeeds(defect.score, bar),
        violates=list(defect.violates),
        unmet=list(defect.score.unmet),
    )


def _closure(declared: set[str], rows: list[Row]) -> set[str]:
    """Declared checks plus everything downstream of them (rows are in declaration order)."""
    out = set(declared)
    for row in rows:
        if row.root in out:
            out.add(row.check)
    return out


def _musts(
    high: Score, isolation: list[DefectOutcome], defects: list[DefectResult], bar: float
) -> list[ControlResult]:
    """MUSTS: every defect declaring violations fails with them unmet. COVERAGE: every
    SPEC id has a check and a defect violating exactly it that fails so."""
    proven = {d.name: violation_proven(d.score, d.violates, bar) for d in isolation if d.violates}
    wrong = [d.name for d in isolation if d.violates and not proven[d.name]]
    unknown = unknown_ids({m.id: "" for m in high.musts}, {d.name: d.violates for d in defects})
    bad = [*wrong, *unknown]
    musts = ControlResult(
        control="MUSTS",
        passed=not bad,
        detail=f"{len(proven) - len(wrong)}/{len(proven)} violating defects fail with the "
        f"MUST unmet" + (f"; not: {', '.join(bad)}" if bad else ""),
    )
    rows = static_coverage(
        {m.id: "" for m in high.musts},
        {r.check: tuple(r.musts) for r in high.rows if r.musts},
        {d.name: d.violates for d in defects if d.violates},
        proven,
    )
    holes = [f"{r.id} ({r.problem})" for r in rows if r.problem]
    coverage = ControlResult(
        control="COVERAGE",
        passed=not holes,
        detail=f"{len(rows) - len(holes)}/{len(rows)} MUSTs covered"
        + (f"; uncovered: {', '.join(holes)}" if holes else ""),
    )
    return [musts, coverage]


def _high(score: Score, t: Thresholds) -> ControlResult:
    ok = score.measurable and not score.unavailable and score.final >= t.high
    why = f"; unavailable: {', '.join(score.unavailable)}" if score.unavailable else ""
    if score.spec_met is not None:
        ok = score.measurable and not score.unavailable and score.spec_met
        why += f"; unmet: {score.unmet}, fired: {score.fired}" if not score.spec_met else ""
        return ControlResult(
            control="HIGH",
            passed=ok,
            detail=f"reference {'meets' if score.spec_met else 'MISSES'} every MUST "
            f"(final {score.final:.4f}){why}",
        )
    return ControlResult(
        control="HIGH",
        passed=ok,
        detail=f"reference final {score.final:.4f} vs high {t.high:g}{why}",
    )


def _low(score: Score, t: Thresholds) -> ControlResult:
    ok = score.measurable and score.final <= t.low and not succeeds(score, t.bar)
    why = "" if score.measurable else "; not measurable"
    return ControlResult(
        control="LOW",
        passed=ok,
        detail=f"LOW tree final {score.final:.4f} vs low {t.low:g} (bar {t.bar:g}){why}",
    )


def _critical(defects: list[DefectResult], bar: float) -> ControlResult:
    critical = [d for d in defects if d.critical]
    above = [f"{d.name} {d.final:.4f}" for d in critical if d.success]
    detail = f"{len(critical) - len(above)}/{len(critical)} critical defects fail"
    if above:
        detail += f"; at or above it: {', '.join(above)}"
    return ControlResult(control="CRITICAL", passed=not above, detail=detail)


def _isolation(defects: list[DefectResult]) -> ControlResult:
    if not defects:
        return ControlResult(
            control="ISOLATION", passed=True, detail="no defects declared: isolation not exercised"
        )
    bad = [d.name for d in defects if not d.passed]
    detail = f"{len(defects) - len(bad)}/{len(defects)} defects isolated"
    if bad:
        detail += f"; failing: {', '.join(bad)}"
    return ControlResult(control="ISOLATION", passed=not bad, detail=detail)


def _determinism(first: Vector, second: Vector) -> ControlResult:
    if first.keys() != second.keys():
        diff = sorted(first.keys() ^ second.keys())
        return ControlResult(
            control="DETERMINISM", passed=False, detail=f"different checks: {', '.join(diff)}"
        )
    moved = [k for k in first if not _same(first[k], second[k])]
    detail = (
        f"{len(first)} checks identical"
        if not moved
        else f"moved: {', '.join(f'{k} {first[k]} -> {second[k]}' for k in moved)}"
    )
    return ControlResult(control="DETERMINISM", passed=not moved, detail=detail)


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=0.0, abs_tol=1e-9)
