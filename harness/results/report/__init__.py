"""``verify/report.json`` as a typed model: goagentbench's fields plus harness's.

``Report`` is built from typed parts, each field described: the rows about the tests
(``targets.py``), the score's record (``score.py``) and what the trial adds around the
verdict (``trial.py``). ``harness.verify.report.build_report`` builds it in one place;
``harness schema report`` prints its JSON Schema. Keys other modules add travel along
(``extra="allow"``) and are written after the declared ones, so a new field never breaks
an old reader or writer. Optional fields (``grader`` onwards) are written only when set.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from harness.results.report.part import Number
from harness.results.report.score import ScoreRecord
from harness.results.report.targets import Row, RuleRow, TargetRow
from harness.results.report.trial import (
    Budget,
    Containment,
    Progress,
    SandboxPolicy,
    ScoringSlot,
    Toolchain,
    WorkspaceDiff,
)


class Report(BaseModel):
    """One trial's verification report (``<run>/verify/report.json``)."""

    model_config = ConfigDict(extra="allow")

    schema_version: str = Field(description="report format version (goagentbench's)")
    run_id: str | None = Field(description="the run's id, as in run.json")
    scenario: str | None = Field(description="scenario name, <family>/<name>")
    scenario_version: str | None = Field(description="the scenario's `version`")
    scenario_sha: str | None = Field(description="sha256 over the scenario's files")
    spec_sha256: str | None = Field(description="sha256 of the scenario's SPEC, if any")
    seed: str | None = Field(description="the secret seed the scorer used")
    agent: str | None = Field(description="agents.yml name of the agent")
    agent_version: str | None = Field(description="the agent's reported version")
    model: str | None = Field(description="llms.yml name of the model ('none' for no model)")
    harness_version: str | None = Field(description="harness version that ran the trial")
    sandboxes: dict[str, str] | None = Field(
        default=None, description="phase (agent, verify) -> the backend it ran on"
    )
    turns: int = Field(description="agent turns (1, or more with continues)")
    success: bool = Field(description="the one verdict: every rule holds and the bar is met")
    outcome: str = Field(description="success, failed, error, timeout or interrupted")
    partial_score: Number | None = Field(description="share of partial tests passed")
    score: Number | None = Field(description="the composed graded score in [0, 1]")
    era: str | None = Field(description="scorer era: results compare only within one era")
    started_at: str | None = Field(description="when the run started (ISO 8601, UTC)")
    verified_at: str = Field(description="when verification ended (ISO 8601, UTC)")
    progress: Progress | None = Field(
        description="goagentbench's run progress (token usage, times), when an agent ran"
    )
    toolchain: Toolchain = Field(description="the toolchain the verifier ran with")
    tests: list[Row] = Field(
        description="required targets as goagentbench writes them (name, passed, output, "
        "error, kind, passed_tests, total_tests, cases); a rules row first when one broke"
    )
    partial_tests: list[Row] = Field(description="partial targets, same rows")
    targets: list[TargetRow] = Field(
        description="every target: target, kind, ok, exit_code, passed, total, error, "
        "env_error, command, duration_s"
    )
    rules: list[RuleRow] = Field(description="modification rules: rule, entry, ok, detail")
    changed_files: list[str] = Field(description="files the agent changed")
    hidden_files: list[str] = Field(description="hidden files copied in before the tests")
    scoring: ScoreRecord | None = Field(description="the score's rows and arithmetic")
    verify_duration_s: Number = Field(description="verification wall time, seconds")
    error: str | None = Field(description="the harness's error, when the verdict is error")
    containment: Containment | None = Field(
        default=None,
        description="what kept the verdict out of the code's reach: restored, rejected "
        "(runner-steering files) and test_user",
    )
    grader: str | None = Field(
        default=None, description="whether this scenario's grader is proven (controls.json) here"
    )
    review_flags: list[str] = Field(
        default_factory=list,
        description="what a fix rarely needs and a forger usually does, found in the agent's "
        "files (file:line: what), for a person to review; never changes the verdict",
    )
    sandbox_policy: SandboxPolicy | None = Field(
        default=None, description="the agent sandbox's policy (run.json), when set"
    )
    budget: Budget | None = Field(default=None, description="the trial's budget, when set")
    reason: str | None = Field(default=None, description="which limit or budget stopped the agent")
    reason_detail: str | None = Field(default=None, description="the stop's full detail")
    scoring_slot: ScoringSlot | None = Field(
        default=None, description="the app-scoring slot's wait (one app scored at a time)"
    )

    workspace_diff: WorkspaceDiff | None = Field(
        default=None,
        description="how workspace.diff came out: status (ok, truncated, failed), detail, "
        "skipped paths",
    )

    spec_met: bool | None = Field(
        default=None,
        description="every MUST of the SPEC met, no critical fired (None: the scenario's "
        "grading has no MUST ids)",
    )
    unmet_musts: list[str] = Field(default_factory=list, description="the MUSTs not met")

    def as_json(self) -> dict[str, Any]:
        """The JSON object written: declared fields that were given (the parts' YAML-style
        keys as written, ``read-only-root``), then extra keys."""
        return self.model_dump(mode="json", exclude_unset=True, by_alias=True)


__all__ = ["Report"]
