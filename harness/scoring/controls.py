"""Controls that prove the grader, as pure verdict arithmetic over scores.

HIGH: the reference tree scores at least ``thresholds.high`` with nothing unavailable.
LOW: the do-nothing tree scores at most ``thresholds.low``. ISOLATION: each defect,
applied to a copy of the reference, breaks every check it declares and nothing else
(checks downstream of a declared check are excused; diagnostic rows are ignored); a
check is broken when its score falls more than ``thresholds.epsilon`` below the
reference, or it becomes unavailable. DETERMINISM: scoring one tree twice gives the same
vector. All scores must come from one era. The caller does the I/O (patching trees,
running them) and passes scores in.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, Field

from harness.scoring.compose import Score
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


class DefectResult(BaseModel):
    name: str
    declared: list[str]
    broken: list[str]
    missed: list[str] = Field(description="declared but not broken")
    cascades: list[str] = Field(description="broken but not declared")
    unknown: list[str] = Field(description="declared names the suite does not have")
    passed: bool


class ControlResult(BaseModel):
    control: Literal["HIGH", "LOW", "ISOLATION", "DETERMINISM", "ERA"]
    passed: bool
    detail: str


class ControlsReport(BaseModel):
    era: str
    controls: list[ControlResult]
    defects: list[DefectResult]
    verdict: str

    @property
    def trusted(self) -> bool:
        return self.verdict == TRUSTED

    def text(self) -> str:
        """One line per control, one per failing defect, then the verdict."""
        lines = [f"controls for {self.era}"]
        for c in self.controls:
            lines.append(f"  {c.control:<11} {'pass' if c.passed else 'FAIL'}  {c.detail}")
        for d in self.defects:
            if not d.passed:
                lines.append(
                    f"  defect {d.name}: missed {d.missed}, cascades {d.cascades}, "
                    f"unknown {d.unknown}"
                )
        lines.append(self.verdict)
        return "\n".join(lines) + "\n"


def evaluate_controls(
    high: Score,
    low: Score,
    isolation: list[DefectOutcome],
    determinism: tuple[Vector, Vector],
    thresholds: Thresholds,
) -> ControlsReport:
    """Judge the four controls and return per-control results and the verdict."""
    defects = [judge_defect(high, d, thresholds.epsilon) for d in isolation]
    controls = [
        _high(high, thresholds),
        _low(low, thresholds),
        _isolation(defects),
        _determinism(*determinism),
    ]
    eras = {high.era, low.era, *(d.score.era for d in isolation)}
    if len(eras) > 1:
        controls.append(
            ControlResult(
                control="ERA", passed=False, detail=f"scores come from several eras: {sorted(eras)}"
            )
        )
    verdict = TRUSTED if all(c.passed for c in controls) else NOT_TRUSTED
    return ControlsReport(era=high.era, controls=controls, defects=defects, verdict=verdict)


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


def judge_defect(reference: Score, defect: DefectOutcome, epsilon: float) -> DefectResult:
    """Compare one defect tree with the reference tree."""
    names = {r.check for r in reference.rows}
    broken = broken_checks(reference, defect.score, epsilon)
    excused = _closure(set(defect.declared), reference.rows)
    unknown = [n for n in defect.declared if n not in names]
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
    )


def _closure(declared: set[str], rows: list[Row]) -> set[str]:
    """Declared checks plus everything downstream of them (rows are in declaration order)."""
    out = set(declared)
    for row in rows:
        if row.root in out:
            out.add(row.check)
    return out


def _high(score: Score, t: Thresholds) -> ControlResult:
    ok = score.measurable and not score.unavailable and score.final >= t.high
    why = f"; unavailable: {', '.join(score.unavailable)}" if score.unavailable else ""
    return ControlResult(
        control="HIGH",
        passed=ok,
        detail=f"reference final {score.final:.4f} vs high {t.high:g}{why}",
    )


def _low(score: Score, t: Thresholds) -> ControlResult:
    ok = score.measurable and score.final <= t.low
    why = "" if score.measurable else "; not measurable"
    return ControlResult(
        control="LOW", passed=ok, detail=f"do-nothing final {score.final:.4f} vs low {t.low:g}{why}"
    )


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
