"""report.json's rows about the tests: per target, per test case, the rules.

``tests`` and ``partial_tests`` hold goagentbench's rows (``TestRow``; a ``RulesRow``
first when a modification rule broke), ``targets`` harness's own (``TargetRow``),
``rules`` one ``RuleRow`` per rule entry. The fields are declared in the order they are
written.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from harness.results.report.part import Number, Part


class CaseRow(Part):
    """One test case as the runner reported it (``verify.outcome.TestCase``)."""

    name: str = Field(description="the test's id: <file or package>::<test>")
    passed: bool = Field(description="the test passed")
    output: str = Field(default="", description="what the failing test printed (capped)")
    error: str | None = Field(default=None, description="failure, error or skipped, if any")
    synthetic: bool = Field(
        default=False, description="stands for a build failure, not a test that ran"
    )


class TestRow(Part):
    """A required or partial target, as goagentbench writes it."""

    __test__ = False  # not a pytest class

    name: str = Field(description="the target (its test entry)")
    passed: bool = Field(description="the target's verdict")
    output: str = Field(description="the first failing test's output, else empty")
    error: str | None = Field(description="why the target failed (the exit status at least)")
    kind: Literal["required", "partial"] = Field(description="required or partial target")
    passed_tests: int = Field(description="test cases passed")
    total_tests: int = Field(description="test cases run")
    cases: list[CaseRow] = Field(description="every test case")


class RulesRow(Part):
    """goagentbench's row for a broken modification rule, first among ``tests``."""

    name: str = Field(description="verify.modification-rules")
    passed: bool = Field(description="always false: a rule broke")
    output: str = Field(description="empty")
    kind: Literal["rules"] = Field(description="rules")
    error: str = Field(description="each broken rule: <rule> <entry>: <detail>, one a line")
    cases: list[CaseRow] = Field(description="empty")


Row = Annotated[TestRow | RulesRow, Field(discriminator="kind")]


class TargetRow(Part):
    """One test target as harness ran it."""

    target: str = Field(description="the test entry (a pytest path or a go package)")
    kind: Literal["required", "partial"] = Field(description="required or partial target")
    ok: bool = Field(description="the target's verdict")
    exit_code: int | None = Field(description="the test command's exit status")
    passed: int = Field(description="test cases passed")
    total: int = Field(description="test cases run")
    error: str | None = Field(description="the harness's reading of a failure, if any")
    env_error: str | None = Field(
        description="a toolchain or dependency failure (not the code's), if any"
    )
    command: list[str] = Field(description="the test command (harness's own parts elided)")
    duration_s: Number = Field(description="wall time, seconds")


class RuleRow(Part):
    """One modification-rule entry and whether it holds."""

    rule: str = Field(description="must-modify, no-modify or only-modify")
    entry: str = Field(description="the path or glob the rule names")
    ok: bool = Field(description="the rule holds")
    detail: str = Field(description="what was found")


__all__ = ["CaseRow", "Row", "RuleRow", "RulesRow", "TargetRow", "TestRow"]
