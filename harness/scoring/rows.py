"""What a check returns (``Outcome``) and what the scorer records (``Row``).

A check function only measures: it returns an ``Outcome`` (score, detail, evidence,
status). The runner stamps it with the check's identity (name, tier, harm, criticality,
root) to make a ``Row``, so a check can never mislabel the harm it stands for.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

#: Reserved tier names. ``diagnostic`` rows are shown with weight zero; ``critical`` rows
#: act only as multipliers; ``excellence`` rows fill the gated excellence slice.
DIAGNOSTIC = "diagnostic"
CRITICAL = "critical"
EXCELLENCE = "excellence"
RESERVED_TIERS = frozenset({DIAGNOSTIC, CRITICAL, EXCELLENCE})


class Status(StrEnum):
    """How a row's score should be read.

    ``ok``: measured. ``unavailable``: the harness could not measure (excluded from means,
    reported). ``absent``: the app lacks the surface (a real zero). ``vacuous``: the
    check's root failed, so it was not run (a zero that belongs to the root's defect).
    """

    OK = "ok"
    UNAVAILABLE = "unavailable"
    ABSENT = "absent"
    VACUOUS = "vacuous"


def _evidence_strings(value: object) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str | Path):
        return [str(value)]
    if isinstance(value, Iterable):
        return [str(v) for v in value]
    raise TypeError(f"evidence must be a path, a string or a list of them, not {value!r}")


class Outcome(BaseModel):
    """A check's measurement before it is stamped with the check's identity."""

    model_config = ConfigDict(frozen=True)

    score: float = Field(ge=0.0, le=1.0)
    detail: str = ""
    evidence: list[str] = Field(default_factory=list)
    status: Status = Status.OK

    @field_validator("evidence", mode="before")
    @classmethod
    def _paths_to_str(cls, value: object) -> list[str]:
        return _evidence_strings(value)


def graded(score: float, detail: str = "", evidence: object = None) -> Outcome:
    """A measured score in [0,1] (clamped, so float noise never raises)."""
    return Outcome(
        score=min(1.0, max(0.0, float(score))), detail=detail, evidence=_evidence_strings(evidence)
    )


def fraction(good: int, total: int, detail: str = "", evidence: object = None) -> Outcome:
    """``good`` of ``total`` items passed; ``total == 0`` is unavailable, not a zero."""
    if total <= 0:
        return unavailable(detail or "nothing to measure (0 items)", evidence)
    text = f"{good}/{total}" + (f": {detail}" if detail else "")
    return graded(good / total, text, evidence)


def absent(detail: str, evidence: object = None) -> Outcome:
    """The app lacks the surface this check measures: a real zero."""
    return Outcome(
        score=0.0, detail=detail, evidence=_evidence_strings(evidence), status=Status.ABSENT
    )


def unavailable(detail: str, evidence: object = None) -> Outcome:
    """The harness could not measure: excluded from means and reported."""
    return Outcome(
        score=0.0, detail=detail, evidence=_evidence_strings(evidence), status=Status.UNAVAILABLE
    )


class Row(BaseModel):
    """One graded measurement, stamped with the check that produced it."""

    model_config = ConfigDict(frozen=True)

    check: str
    tier: str
    harm: str
    score: float = Field(ge=0.0, le=1.0)
    status: Status = Status.OK
    detail: str = ""
    evidence: list[str] = Field(default_factory=list)
    critical: bool = False
    severity: str | None = None
    root: str | None = None
    musts: list[str] = Field(default_factory=list, description="SPEC ids the check verifies")
    tolerance: float = 0.0

    @field_validator("evidence", mode="before")
    @classmethod
    def _paths_to_str(cls, value: object) -> list[str]:
        return _evidence_strings(value)

    @property
    def counts(self) -> bool:
        """Whether the row enters means and factors (unavailable rows do not)."""
        return self.status is not Status.UNAVAILABLE

    @property
    def failed(self) -> bool:
        """A failed root makes its dependants vacuous: absent, vacuous, or scored 0."""
        return self.status in (Status.ABSENT, Status.VACUOUS) or (
            self.status is Status.OK and self.score <= 0.0
        )
