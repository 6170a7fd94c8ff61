"""``compose(rows, suite) -> Score``: the scoring arithmetic, pure and without I/O.

    inner     = sum(w_t * mean_t) / sum(w_t) over weighted tiers with a measurable mean
    gate      = fraction of the suite's gate conditions that hold (1 when there are none)
    base      = (1 - e) * inner + e * gate * excellence        (e = excellence_weight)
    final     = base * prod(m + (1 - m) * severity)            over critical rows

Unavailable rows are excluded from every mean and factor (and listed). The excellence
mean is 1 when the suite has no excellence checks (gates alone unlock the slice); when
all of them are unavailable the slice folds back into ``inner``. A failed root and the
criticals downstream of it multiply once: by the worst of their factors.

``final`` ranks. Success is decided by ``spec_met`` when the suite's SPEC carries MUST
ids (``harness.scoring.must``): every MUST met and no critical fired.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable

from pydantic import BaseModel, Field, computed_field

from harness.scoring.must import MustResult, judge_musts
from harness.scoring.rows import EXCELLENCE, Row, Status
from harness.scoring.suite import Gate, Suite


class GateResult(BaseModel):
    gate: str
    value: float | None
    met: bool


class Factor(BaseModel):
    """One critical multiplier; ``covers`` are downstream criticals folded into it."""

    check: str
    severity: str
    score: float
    floor: float
    factor: float
    covers: list[str] = Field(default_factory=list)


class RootBlock(BaseModel):
    """A failed root and the vacuous checks downstream of it."""

    root: str
    downstream: list[str]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def note(self) -> str:
        n = len(self.downstream)
        return f"{n} further checks are downstream of {self.root}: one defect, not {n + 1}"


class Score(BaseModel):
    """The composed score with every intermediate value, for text and JSON reports."""

    suite: str
    era: str
    fingerprint: str | None = None
    scorer: str | None = Field(default=None, description="code fingerprint of the scorer")
    tier_weights: dict[str, float]
    tier_means: dict[str, float | None]
    excellence_weight: float
    inner: float
    gate: float
    gates: list[GateResult]
    excellence: float | None
    base: float
    factors: list[Factor]
    final: float
    measurable: bool
    blocks: list[RootBlock]
    unavailable: list[str]
    rows: list[Row]
    musts: list[MustResult] = Field(default_factory=list)
    unmet: list[str] = Field(default_factory=list, description="SPEC ids not met")
    fired: list[str] = Field(default_factory=list, description="criticals not met")
    spec_met: bool | None = Field(
        default=None, description="every MUST met, no critical fired; None: suite has no MUSTs"
    )

    def vector(self) -> dict[str, float | None]:
        """Per-check scores (None when unavailable), for determinism comparisons."""
        return {r.check: (None if r.status is Status.UNAVAILABLE else r.score) for r in self.rows}


def compose(
    rows: list[Row],
    suite: Suite,
    *,
    era: str | None = None,
    fingerprint: str | None = None,
    scorer: str | None = None,
) -> Score:
    """Compose rows into a ``Score`` using the suite's weights, gates and floors.

    ``era`` defaults to the suite's provisional era (``-rc`` when it has a thresholds
    file, since calibration cannot be confirmed without reading it).
    """
    by_name = {r.check: r for r in rows}
    means = {t: _mean(r for r in rows if r.tier == t) for t in suite.tier_weights}
    measured = {t: m for t, m in means.items() if m is not None}
    wsum = sum(suite.tier_weights[t] for t in measured)
    inner = sum(suite.tier_weights[t] * m for t, m in measured.items()) / wsum if wsum else 0.0

    exc_rows = [r for r in rows if r.tier == EXCELLENCE]
    excellence = _mean(exc_rows) if exc_rows else 1.0
    gates = [_gate(g, inner, means, excellence, by_name) for g in suite.gates]
    gate = sum(g.met for g in gates) / len(gates) if gates else 1.0
    e = suite.excellence_weight
    base = inner if excellence is None else (1 - e) * inner + e * gate * excellence

    blocks = _blocks(rows, by_name)
    factors = _factors(rows, by_name, blocks, suite)
    final = base * math.prod(f.factor for f in factors)
    ids = suite.spec_ids()
    declared = {r.check: tuple(r.musts) for r in rows if r.musts}
    musts, fired = judge_musts(ids, rows, declared, {r.check: r.tolerance for r in rows})
    unmet = [m.id for m in musts if not m.met]
    return Score(
        suite=suite.name,
        era=era or _provisional_era(suite),
        fingerprint=fingerprint,
        scorer=scorer,
        tier_weights=dict(suite.tier_weights),
        excellence_weight=e,
        tier_means=means,
        inner=inner,
        gate=gate,
        gates=gates,
        excellence=excellence,
        base=base,
        factors=factors,
        final=min(1.0, max(0.0, final)),
        measurable=bool(measured),
        blocks=[RootBlock(root=k, downstream=v) for k, v in blocks.items()],
        unavailable=[r.check for r in rows if r.status is Status.UNAVAILABLE],
        rows=list(rows),
        musts=musts,
        unmet=unmet,
        fired=fired,
        spec_met=(not unmet and not fired) if ids else None,
    )


def _provisional_era(suite: Suite) -> str:
    suffix = "-rc" if suite.thresholds is not None else ""
    return f"{suite.name}@{suite.version}{suffix}"


def _mean(rows: Iterable[Row]) -> float | None:
    scores = [r.score for r in rows if r.counts]
    return sum(scores) / len(scores) if scores else None


def _gate(
    gate: Gate,
    inner: float,
    means: dict[str, float | None],
    excellence: float | None,
    by_name: dict[str, Row],
) -> GateResult:
    value: float | None
    if gate.subject == "inner":
        value = inner
    elif gate.subject == EXCELLENCE:
        value = excellence
    elif gate.subject in means:
        value = means[gate.subject]
    else:
        row = by_name.get(gate.subject)
        value = row.score if row is not None and row.counts else None
    return GateResult(gate=str(gate), value=value, met=gate.holds(value))


def _blocks(rows: list[Row], by_name: dict[str, Row]) -> dict[str, list[str]]:
    """Map each failed root to the vacuous rows below it (chains go to the top root)."""
    out: dict[str, list[str]] = defaultdict(list)
    for row in rows:
        if row.status is not Status.VACUOUS:
            continue
        top = row
        while top.status is Status.VACUOUS and top.root in by_name:
            top = by_name[top.root]
        out[top.check].append(row.check)
    return dict(out)


def _factors(
    rows: list[Row], by_name: dict[str, Row], blocks: dict[str, list[str]], suite: Suite
) -> list[Factor]:
    """One factor per counting critical; a failed root's block multiplies once."""
    folded: set[str] = set()
    out: list[Factor] = []
    for root, below in blocks.items():
        group = [by_name[root], *(by_name[n] for n in below)]
        crit = [r for r in group if r.critical and r.counts]
        if not crit:
            continue
        made = [_factor(r, suite) for r in crit]
        worst = min(made, key=lambda f: f.factor)
        worst.covers = [f.check for f in made if f is not worst]
        out.append(worst)
        folded.update(r.check for r in crit)
    for row in rows:
        if row.critical and row.counts and row.check not in folded:
            out.append(_factor(row, suite))
    return out


def _factor(row: Row, suite: Suite) -> Factor:
    m = suite.floor(row.severity)
    return Factor(
        check=row.check,
        severity=row.severity or "critical",
        score=row.score,
        floor=m,
        factor=m + (1 - m) * row.score,
    )
