"""The implicit suite of a test-based scenario, so every report has the same shape.

One check per test target (an entry of the scenario's ``tests`` or ``partial-tests``),
graded by the fraction of its tests that passed. Weights: required targets form tier
``core`` (0.8), partial targets tier ``partial`` (0.2); when only one kind exists it
takes weight 1. A target that errored before running tests (e.g. it does not compile)
is a real zero; a target with no tests and no error is ``unavailable`` (the harness
found nothing to run). Modification-rule violations are a critical of class
``integrity`` with floor 0: a result from changed protected files cannot be trusted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from harness.errors import UserError
from harness.scoring.rows import Outcome, Row, Status, graded, unavailable
from harness.scoring.suite import CheckFn, Suite

REQUIRED_WEIGHT = 0.8
PARTIAL_WEIGHT = 0.2
RULES_CHECK = "modification-rules"
RULES_HARM = "result cannot be trusted: the modification rules do not hold"


@dataclass(frozen=True)
class TestTargetResult:
    """Per-target test outcome: ``passed`` of ``total`` tests, or an ``error``."""

    __test__ = False  # not a pytest class, despite the name

    target: str
    kind: Literal["required", "partial"]
    passed: int
    total: int
    error: str | None = None


def suite_from_tests(
    targets: list[TestTargetResult],
    rules_ok: bool,
    rules_detail: str,
    *,
    name: str = "tests",
    version: str = "1.0.0",
) -> tuple[Suite, list[Row]]:
    """Build the implicit suite and its rows from test results (no checks are run)."""
    if not targets:
        raise UserError(
            "a test-based scenario has no test targets",
            field="tests",
            fix="list at least one target under tests or partial-tests",
        )
    kinds = {t.kind for t in targets}
    both = kinds == {"required", "partial"}
    weights = {"core": REQUIRED_WEIGHT, "partial": PARTIAL_WEIGHT}
    if not both:
        weights = {"partial" if kinds == {"partial"} else "core": 1.0}
    # Only partial targets are "cosmetic" next to the integrity critical; a lone
    # required target may legitimately cost as much as a rules violation.
    ranking = ["integrity", "partial"] if both else ["integrity"]
    suite = Suite(
        name=name,
        version=version,
        tier_weights=weights,
        class_floors={"integrity": 0.0},
        severity_ranking=ranking,
    )
    rows: list[Row] = []
    for target in targets:
        outcome = _grade(target)
        tier = "core" if target.kind == "required" else "partial"
        harm = (
            f"required behaviour broken: tests in {target.target} fail"
            if target.kind == "required"
            else f"partial credit lost: tests in {target.target} fail"
        )
        chk = suite.add(target.target, _fixed(outcome), harm=harm, tier=tier)
        rows.append(chk.row(outcome))
    rules = graded(1.0 if rules_ok else 0.0, rules_detail)
    chk = suite.add(
        RULES_CHECK, _fixed(rules), harm=RULES_HARM, critical=True, severity="integrity"
    )
    rows.append(chk.row(rules))
    return suite, rows


def _grade(target: TestTargetResult) -> Outcome:
    if target.error:
        return graded(0.0, f"{target.passed}/{target.total}: {target.error}")
    if target.total <= 0:
        return unavailable("no tests ran and no error was reported")
    passed = min(max(target.passed, 0), target.total)
    return Outcome(
        score=passed / target.total, detail=f"{passed}/{target.total} passed", status=Status.OK
    )


def _fixed(outcome: Outcome) -> CheckFn:
    """A check function that returns a precomputed outcome (results came from runners)."""

    def check(_ctx: object) -> Outcome:
        return outcome

    return check
