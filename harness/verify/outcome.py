"""Result types of a verification: per-test cases, per-target results, the outcome."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from harness.verify.rules import RuleResult

Kind = Literal["required", "partial"]  # a required target must pass; a partial one counts
AgentFiles = tuple[Sequence[str], Sequence[str]]  # (changed files, hidden files)


class TestCase(BaseModel):
    name: str
    passed: bool
    output: str = ""
    error: str | None = None
    synthetic: bool = False  # stands for a build failure, not a test that ran


class TargetResult(BaseModel):
    target: str
    kind: Kind
    command: list[str] = Field(default_factory=list)
    tests: list[TestCase] = Field(default_factory=list)
    error: str | None = None
    duration_s: float = 0.0
    exit_code: int | None = None
    ok: bool | None = None  # the target's verdict: its test command succeeded
    env_error: str | None = None  # a toolchain or dependency failure, not the code's

    @property
    def passed(self) -> int:
        return sum(t.passed for t in self.tests)

    @property
    def total(self) -> int:
        return len(self.tests)

    @property
    def ran(self) -> tuple[int, int]:
        """(passed, total) over tests that actually ran, as goagentbench counts them."""
        real = [t for t in self.tests if not t.synthetic]
        return sum(t.passed for t in real), len(real)

    @property
    def all_passed(self) -> bool:
        """goagentbench's rule when the runner set ``ok``; else every test passed."""
        if self.ok is not None:
            return self.ok
        return self.error is None and self.total > 0 and self.passed == self.total


class VerifyOutcome(BaseModel):
    """What the verifier hands back; the host adds run metadata to make the report."""

    success: bool
    partial_score: float | None
    rules: list[RuleResult]
    targets: list[TargetResult]
    changed_files: list[str]
    hidden_files: list[str]
    score: dict[str, Any] | None = None
    era: str | None = None
    bar: float | None = None  # the suite's success threshold; None for test-based scoring
    report_text: str = ""
    duration_s: float = 0.0
    error: str | None = None
    toolchain: dict[str, Any] | None = None  # what actually ran (go version, python)
    restored: list[str] = Field(default_factory=list)  # runner-steering files put back
    rejected: list[str] = Field(default_factory=list)  # targets whose result was refused
    test_user: str | None = None  # who the hidden tests ran as, enforced or not
    review_flags: list[str] = Field(default_factory=list)  # for a person; never the verdict

    @classmethod
    def ungraded(cls, *, error: str | None = None, report_text: str = "") -> VerifyOutcome:
        """An outcome with nothing graded: the verifier failed (``error``) or the trial
        was stopped before grading (``report_text`` says why)."""
        return cls(
            success=False,
            partial_score=None,
            rules=[],
            targets=[],
            changed_files=[],
            hidden_files=[],
            report_text=report_text,
            error=error,
        )
