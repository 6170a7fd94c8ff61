"""The one place a trial's outcome is decided, from what verification found.

The verifier calls ``decide(outcome)`` to fill ``VerifyOutcome.success``; the trial calls
``decide(outcome, agent_outcome)`` for the outcome word of the run. Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from harness.verify.outcome import VerifyOutcome

TrialOutcome = Literal["success", "failed", "error", "timeout"]
STOP_OUTCOMES = ("limit", "budget")  # agent phases a sandbox limit or the budget ended


@dataclass(frozen=True)
class Verdict:
    success: bool  # the work passes: rules, required tests, partial tests or suite bar
    outcome: TrialOutcome  # the trial's word: infrastructure and timeouts set apart


def decide(outcome: VerifyOutcome, agent_outcome: str | None = None) -> Verdict:
    """Success needs every modification rule and required test target to hold; then
    either the scenario's suite reaches its bar (``outcome.bar``) or, for a test-based
    scenario, there were targets and every partial test passed. An error anywhere (the
    verifier's, or an agent phase that ended in ``error``) is ``error``, never ``failed``;
    an agent that hit its time limit is ``timeout``; one a sandbox limit or the budget
    stopped is ``failed``."""
    rules_ok = all(r.ok for r in outcome.rules)
    required_ok = all(t.all_passed for t in outcome.targets if t.kind == "required")
    score = outcome.score or {}
    if outcome.bar is not None:
        passed = (
            rules_ok
            and required_ok
            and bool(score.get("measurable"))
            and float(score.get("final") or 0.0) >= outcome.bar
        )
    else:
        partial = outcome.partial_score
        passed = rules_ok and required_ok and partial in (None, 1.0) and bool(outcome.targets)
    success = passed and outcome.error is None
    word: TrialOutcome
    if outcome.error or agent_outcome == "error":
        word = "error"
    elif agent_outcome == "timeout":
        word = "timeout"
    elif agent_outcome in STOP_OUTCOMES:
        word = "failed"  # stopped for what it did: ungraded, and not the harness's fault
    else:
        word = "success" if success else "failed"
    return Verdict(success, word)
