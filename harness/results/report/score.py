"""report.json's ``scoring``: the composed score with every intermediate value.

The same fields, in the same order, as ``scoring.Score`` writes them (``scoring/`` sits
above ``results/``, so the record is declared here; ``tests/results/test_report.py``
holds the two to the same fields).
"""

from __future__ import annotations

from pydantic import Field

from harness.results.report.part import Number, Part


class GateRecord(Part):
    """One gate of the suite and whether the run met it."""

    gate: str = Field(description="the gate's expression")
    value: Number | None = Field(description="the value the gate compared (None: unavailable)")
    met: bool = Field(description="the gate was met")


class FactorRecord(Part):
    """A critical check's factor on the final score."""

    check: str = Field(description="the critical check")
    severity: str = Field(description="its severity (integrity, dead, ...)")
    score: Number = Field(description="the check's score")
    floor: Number = Field(description="the factor at a score of 0")
    factor: Number = Field(description="floor + (1 - floor) x score")
    covers: list[str] = Field(default_factory=list, description="the checks it folds in")


class BlockRecord(Part):
    """A failed root check and the checks downstream of it (one defect, not many)."""

    root: str = Field(description="the root check")
    downstream: list[str] = Field(description="the checks that could not run because of it")
    note: str = Field(description="the sentence the text report prints")


class RowRecord(Part):
    """One check's row."""

    check: str = Field(description="the check's name")
    tier: str = Field(description="its tier (critical, core, ..., excellence)")
    harm: str = Field(description="what a user loses when it fails")
    score: Number = Field(description="the row's score in [0, 1]")
    status: str = Field(description="ok, unavailable, absent or vacuous")
    detail: str = Field(default="", description="what the check saw")
    evidence: list[str] = Field(default_factory=list, description="evidence files it wrote")
    critical: bool = Field(default=False, description="a critical check (a factor)")
    severity: str | None = Field(default=None, description="a critical's severity")
    root: str | None = Field(default=None, description="the root check it depends on")
    musts: list[str] = Field(default_factory=list, description="SPEC ids the check verifies")
    tolerance: Number = Field(default=0.0, description="how far below 1.0 still meets a MUST")


class MustRecord(Part):
    """One MUST of the SPEC and whether its checks met it."""

    id: str = Field(description="the SPEC id (M-...)")
    met: bool = Field(description="every check declaring it was met")
    checks: list[str] = Field(description="the checks declaring it")
    failing: list[str] = Field(default_factory=list, description="declaring checks not met")


class ScoreRecord(Part):
    """The score's rows and arithmetic (``harness.scoring.Score``)."""

    suite: str = Field(description="the suite's name and version")
    era: str = Field(description="the scorer era: results compare only within one")
    fingerprint: str | None = Field(default=None, description="the suite's content hash")
    scorer: str | None = Field(default=None, description="code fingerprint of the scorer")
    tier_weights: dict[str, Number] = Field(description="tier -> its weight in the inner score")
    tier_means: dict[str, Number | None] = Field(
        description="tier -> the mean of its rows (None: every row unavailable)"
    )
    excellence_weight: Number = Field(description="the excellence slice")
    inner: Number = Field(description="the weighted mean of the tier means")
    gate: Number = Field(description="the share of gates met")
    gates: list[GateRecord] = Field(description="each gate")
    excellence: Number | None = Field(description="the excellence tier's mean")
    base: Number = Field(description="inner, with the gated excellence slice")
    factors: list[FactorRecord] = Field(description="each critical's factor")
    final: Number = Field(description="base x every factor: the score")
    measurable: bool = Field(description="some weighted tier was measured")
    blocks: list[BlockRecord] = Field(description="failed roots and their downstream checks")
    unavailable: list[str] = Field(description="checks the harness could not measure")
    rows: list[RowRecord] = Field(description="every check's row")
    musts: list[MustRecord] = Field(default_factory=list, description="each MUST of the SPEC")
    unmet: list[str] = Field(default_factory=list, description="SPEC ids not met")
    fired: list[str] = Field(default_factory=list, description="criticals not met")
    spec_met: bool | None = Field(
        default=None, description="every MUST met, no critical fired; None: suite has no MUSTs"
    )


__all__ = ["BlockRecord", "FactorRecord", "GateRecord", "MustRecord", "RowRecord", "ScoreRecord"]
