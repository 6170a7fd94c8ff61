"""What the verifier is asked to do (``VerifyRequest``), and how a scenario makes one.

The request is serialisable: it crosses into the scorer container as JSON.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from harness.scenario import LoadedScenario


class HiddenCopy(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    from_: str = Field(alias="from")
    to: str


class VerifyRequest(BaseModel):
    """Everything the verifier needs, serialisable so it can cross into a container."""

    model_config = ConfigDict(populate_by_name=True)

    scenario: str
    baseline: str
    seed: str
    runner: str
    must_modify: list[str] = Field(default_factory=list)
    no_modify: list[str] = Field(default_factory=list)
    only_modify: list[str] = Field(default_factory=list)
    tests: list[str] = Field(default_factory=list)
    partial_tests: list[str] = Field(default_factory=list)
    copy_: list[HiddenCopy] = Field(default_factory=list, alias="copy")
    hidden_root: str
    suite_dir: str | None = None
    evidence_dir: str | None = None
    python: str = Field(default_factory=lambda: sys.executable)
    timeout_s: float = 600.0
    copy_only: bool = False


def make_request(
    loaded: LoadedScenario, workspace: Path, baseline: str, seed: str, *, copy_only: bool = False
) -> VerifyRequest:
    scn = loaded.scenario
    v = scn.verify
    return VerifyRequest(
        scenario=loaded.name,
        baseline=baseline,
        seed=seed,
        runner=scn.runner(workspace),
        must_modify=v.must_modify,
        no_modify=v.no_modify,
        only_modify=v.only_modify,
        tests=v.tests,
        partial_tests=v.partial_tests,
        copy=[HiddenCopy(**{"from": c.from_, "to": c.to}) for c in v.copy_],
        hidden_root=str(loaded.directory),
        suite_dir=str(loaded.directory / v.suite) if v.suite else None,
        timeout_s=scn.environment.verify_timeout,
        copy_only=copy_only,
    )
