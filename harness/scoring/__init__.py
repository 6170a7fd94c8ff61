"""Scoring: checks, rows, composition, selftest, eras and controls (pure, no processes).

Typical use::

    suite = Suite(name="ledger", version="1.0.0", tier_weights={"core": 0.7, "ui": 0.3})

    @suite.check("money.exponent", critical=True, severity="money",
                 harm="wrong money: a minor-unit exponent misapplied")
    def money_exponent(ctx) -> Outcome:
        return fraction(ctx.good, ctx.total)

    score = Scorer(suite).score(ctx)   # selftest first; refuses to score if it fails
    print(render_text(score))
"""

from harness.scoring.compose import Factor, GateResult, RootBlock, Score, compose
from harness.scoring.era import (
    Stamp,
    Thresholds,
    check_pin,
    era_of,
    fingerprint,
    load_thresholds,
    sha256_file,
    stamp,
)
from harness.scoring.rows import (
    CRITICAL,
    DIAGNOSTIC,
    EXCELLENCE,
    Outcome,
    Row,
    Status,
    absent,
    fraction,
    graded,
    unavailable,
)
from harness.scoring.run import mark_vacuous, run_checks
from harness.scoring.scorer import Scorer
from harness.scoring.selftest import SelftestFailed, selftest
from harness.scoring.suite import Check, CheckFn, Gate, Suite
from harness.scoring.tests_suite import TestTargetResult, suite_from_tests
from harness.scoring.text import render_json, render_text
from harness.scoring.verdicts import (
    NOT_TRUSTED,
    TRUSTED,
    ControlResult,
    ControlsReport,
    DefectOutcome,
    DefectResult,
    Vector,
    broken_checks,
    evaluate_controls,
)

__all__ = [
    "CRITICAL",
    "DIAGNOSTIC",
    "EXCELLENCE",
    "NOT_TRUSTED",
    "TRUSTED",
    "Check",
    "CheckFn",
    "ControlResult",
    "ControlsReport",
    "DefectOutcome",
    "DefectResult",
    "Factor",
    "Gate",
    "GateResult",
    "Outcome",
    "RootBlock",
    "Row",
    "Score",
    "Scorer",
    "SelftestFailed",
    "Stamp",
    "Status",
    "Suite",
    "TestTargetResult",
    "Thresholds",
    "Vector",
    "absent",
    "broken_checks",
    "check_pin",
    "compose",
    "era_of",
    "evaluate_controls",
    "fingerprint",
    "fraction",
    "graded",
    "load_thresholds",
    "mark_vacuous",
    "render_json",
    "render_text",
    "run_checks",
    "selftest",
    "sha256_file",
    "stamp",
    "suite_from_tests",
    "unavailable",
]
