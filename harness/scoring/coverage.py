"""MUST coverage: each SPEC id, the checks that verify it, the defects that violate it.

A MUST is *covered* when at least one check declares it and at least one defect violates
exactly it (``violates: [that id]``) and, scored, does not succeed with that id unmet.
``static_coverage`` answers from declarations alone (``harness coverage``);
``proven_coverage`` from a controls run's defect results. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from pydantic import BaseModel, Field

from harness.scoring.compose import Score


class CoverageRow(BaseModel):
    """One SPEC id and what verifies and violates it."""

    id: str
    text: str = ""
    checks: list[str]
    defects: list[str] = Field(description="defects whose violates names this id")
    exact: list[str] = Field(description="defects violating exactly this id")
    failing_exact: list[str] | None = Field(
        default=None, description="exact defects proven to fail it (None: not run)"
    )

    @property
    def problem(self) -> str | None:
        """Why the id is not covered, or None when it is."""
        if not self.checks:
            return "NO CHECK"
        if not self.exact:
            return "NO DEFECT"
        if self.failing_exact is not None and not self.failing_exact:
            return "NO FAILING DEFECT"
        return None

    def line(self) -> str:
        proven = "" if self.failing_exact is None else f"  failing: {self.failing_exact}"
        return (
            f"{self.id:<14} {', '.join(self.checks) or '-':<40} "
            f"{', '.join(self.defects) or '-':<40} {self.problem or 'covered'}{proven}"
        )


class Verdict(Protocol):
    """What a trial verdict is decided from: a ``Score``, or a calibration ledger line."""

    @property
    def final(self) -> float: ...
    @property
    def measurable(self) -> bool: ...
    @property
    def spec_met(self) -> bool | None: ...


def succeeds(score: Verdict, bar: float) -> bool:
    """The trial verdict of a score: every MUST met when the SPEC has ids, else the bar."""
    if score.spec_met is not None:
        return score.measurable and score.spec_met
    return score.measurable and score.final >= bar


def violation_proven(score: Score, violates: Sequence[str], bar: float) -> bool:
    """A defect tree fails, and every id it declares violating is among the unmet."""
    return not succeeds(score, bar) and all(v in score.unmet for v in violates)


def static_coverage(
    ids: Mapping[str, str],
    declared: Mapping[str, tuple[str, ...]],
    violations: Mapping[str, Sequence[str]],
    proven: Mapping[str, bool] | None = None,
) -> list[CoverageRow]:
    """Rows in SPEC order. ``declared``: check -> ids; ``violations``: defect -> ids;
    ``proven``: defect -> whether its scored tree failed as declared (from controls)."""
    rows = []
    for ident, text in ids.items():
        exact = [d for d, v in violations.items() if list(v) == [ident]]
        rows.append(
            CoverageRow(
                id=ident,
                text=text,
                checks=[c for c, m in declared.items() if ident in m],
                defects=[d for d, v in violations.items() if ident in v],
                exact=exact,
                failing_exact=None if proven is None else [d for d in exact if proven.get(d)],
            )
        )
    return rows


def unknown_ids(ids: Mapping[str, str], violations: Mapping[str, Sequence[str]]) -> list[str]:
    """``defect: id`` for declared violations the SPEC does not define."""
    return [f"{d}: {v}" for d, vs in violations.items() for v in vs if v not in ids]
