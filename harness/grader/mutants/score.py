"""The mutation score and the MUTATION control: pure arithmetic over ledger lines.

A mutant is *killed* when its trial would fail (the scoring's verdict under the
scenario's bar, or a scoring that ran out of time), *survives* when it would succeed,
and is left out when its scoring was an infrastructure error. A survivor the scenario's
triage file records as equivalent (it behaves as the reference does, with the reason)
leaves the denominator; an *equivalent* mutant that was killed anyway is named, since
either the triage is wrong or the grader fails a tree that behaves rightly. The score
is killed / (killed + survivors not equivalent).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, Field

from harness.scoring.verdicts import ControlResult

Outcome = Literal["killed", "survived", "timeout", "error"]

#: GRADER TRUSTED for an app suite needs this score on at least this many mutants.
MIN_SCORE = 0.95
MIN_SAMPLE = 100
#: Repository scenarios get no threshold; under this their authors are told.
FLAG_BELOW = 0.8


class MutantLine(BaseModel):
    """One scoring of one mutant: a line of the scenario's ``mutants.jsonl``."""

    mutant: str = Field(description="the mutant's id: path:line:operator:occurrence")
    seed: str
    sandbox: str
    digest: str = Field(description="sha256 of the mutated tree's files (.git left out)")
    reference: str = Field(description="sha256 of the reference tree it was made from")
    scorer: str = Field(description="the scorer's fingerprint (suite code, or scenario)")
    outcome: Outcome
    final: float | None = None
    spec_met: bool | None = None
    unmet: list[str] = Field(default_factory=list)
    seconds: float = 0.0
    detail: str = ""


@dataclass
class MutationScore:
    """What a set of mutant scorings says about the grader."""

    killed: list[str] = field(default_factory=list)
    survived: list[str] = field(default_factory=list)  # not triaged equivalent
    equivalent: list[str] = field(default_factory=list)  # survivors triaged equivalent
    killed_equivalent: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def judged(self) -> int:
        """Mutants that count: killed plus survivors not triaged equivalent."""
        return len(self.killed) + len(self.survived)

    @property
    def score(self) -> float | None:
        return len(self.killed) / self.judged if self.judged else None

    def line(self) -> str:
        score = "n/a" if self.score is None else f"{self.score:.3f}"
        text = (
            f"mutation score {score}: {len(self.killed)} killed of {self.judged} "
            f"({len(self.survived)} survived, {len(self.equivalent)} equivalent"
        )
        if self.errors:
            text += f", {len(self.errors)} not scored (error)"
        return text + ")"

    def as_json(self) -> dict[str, object]:
        return {
            "score": self.score,
            "judged": self.judged,
            "killed": len(self.killed),
            "survived": sorted(self.survived),
            "equivalent": sorted(self.equivalent),
            "killed_equivalent": sorted(self.killed_equivalent),
            "errors": len(self.errors),
        }


def mutation_score(lines: Iterable[MutantLine], equivalent: Mapping[str, str]) -> MutationScore:
    """Tally the newest line per mutant (``equivalent``: triaged id -> reason)."""
    newest: dict[str, MutantLine] = {}
    for line in lines:
        newest[line.mutant] = line
    out = MutationScore()
    for ident, line in sorted(newest.items()):
        if line.outcome == "error":
            out.errors.append(ident)
        elif line.outcome in ("killed", "timeout"):
            out.killed.append(ident)
            if ident in equivalent:
                out.killed_equivalent.append(ident)
        elif ident in equivalent:
            out.equivalent.append(ident)
        else:
            out.survived.append(ident)
    return out


def mutation_control(
    found: MutationScore, min_score: float = MIN_SCORE, min_sample: int = MIN_SAMPLE
) -> ControlResult:
    """MUTATION: at least ``min_sample`` judged mutants, at least ``min_score`` killed."""
    if found.judged < min_sample:
        return ControlResult(
            control="MUTATION",
            passed=False,
            detail=(
                f"{found.judged} mutants judged by this scorer, {min_sample} needed "
                "(`harness mutants SCENARIO --sample 100`)"
            ),
        )
    passed = found.score is not None and found.score >= min_score
    detail = found.line()
    if not passed:
        detail += f"; below {min_score}: survivors {', '.join(found.survived[:5])}"
        detail += " ..." if len(found.survived) > 5 else ""
    return ControlResult(control="MUTATION", passed=passed, detail=detail)


__all__ = [
    "FLAG_BELOW",
    "MIN_SAMPLE",
    "MIN_SCORE",
    "MutantLine",
    "MutationScore",
    "mutation_control",
    "mutation_score",
]
