"""``controls.json`` as a typed model: what the grader was proven on, and the verdict.

``harness controls`` writes one per scenario (``results/<scenario>/controls.json``);
``harness schema controls`` prints its JSON Schema. The header (which scenario, where,
with which seed) comes first, then the controls report itself (``ControlsReport``).
Keys other modules add travel along (``extra="allow"``).
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field

from harness.scoring import ControlsReport

HEADER = (
    "scenario",
    "scenario_version",
    "scenario_sha",
    "at",
    "sandbox",
    "environment",
    "seed",
    "scoring",
    "high",
    "low",
    "low_tree",
    "nop",
    "defect_scores",
)


class ControlsRecord(ControlsReport):
    """One scenario's grader proof (``controls.json``)."""

    model_config = ConfigDict(extra="allow")

    scenario: str = Field(description="scenario name, <family>/<name>")
    scenario_version: str | None = Field(description="the scenario's `version`")
    scenario_sha: str = Field(description="sha256 over the scenario's files it proves")
    at: str = Field(description="when the controls ran (ISO 8601, UTC)")
    sandbox: str = Field(description="the backend the controls ran on")
    environment: dict[str, Any] | None = Field(
        description="the proof environment (toolchain, image): a proof holds only there"
    )
    seed: str = Field(description="the seed every tree was scored with")
    scoring: str = Field(description="the app-scoring slot's policy")
    high: float | int | None = Field(description="the reference tree's final score")
    low: float | int | None = Field(description="the LOW tree's final score")
    low_tree: str = Field(description="what the LOW tree is (low.patch or do-nothing)")
    nop: float | int | None = Field(description="the do-nothing tree's final score")
    defect_scores: dict[str, float | int | None] = Field(
        description="defect name -> its final score"
    )
    reused: list[str] = Field(
        default_factory=list,
        description="trees whose scoring was read from an earlier run (--reuse), not redone",
    )
    proofs: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="the latest proof of each environment (by sandbox: docker, local) of "
        "this scenario content; the top level is the latest of them",
    )

    mutation: dict[str, Any] | None = Field(
        default=None,
        description="an app suite's mutation score from its mutants.jsonl (score, judged, "
        "killed, survived ids, equivalent ids, killed_equivalent ids, errors)",
    )

    def as_json(self) -> dict[str, Any]:
        """The JSON object written: the header first, then the report, then extra keys."""
        data = self.model_dump(mode="json")
        head = {k: data.pop(k) for k in HEADER}
        return {**head, **data}


__all__ = ["HEADER", "ControlsRecord"]
