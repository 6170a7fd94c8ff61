"""The result folder of one run: ``results/<scenario>/<run_id>/``.

``run.json`` (who, what, where), ``progress.json`` (phases), ``agent/`` (transcript and
output), ``workspace.diff`` (the agent's change) and ``verify/report.json`` plus
``verify/report.txt``. Every file is written atomically.
"""

from __future__ import annotations

import os
import platform
import secrets
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from harness.util.fs import read_json, write_json

REPORT_SCHEMA_VERSION = "1.0"
Outcome = Literal["success", "failed", "error", "timeout", "interrupted"]


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def new_run_id(agent: str, model: str) -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    safe = "".join(c if c.isalnum() or c in "-." else "-" for c in f"{agent}-{model}")
    return f"{stamp}-{safe}-{secrets.token_hex(3)}"


def host_info() -> dict[str, str]:
    return {
        "os": platform.platform(),
        "machine": platform.machine(),
        "python": sys.version.split()[0],
        "cpus": str(os.cpu_count() or 0),
    }


class RunMeta(BaseModel):
    """``run.json``: who ran what, on which content, where and when.

    Fields other modules add travel along (``extra="allow"``), so reading and writing
    back a run.json never loses anything.
    """

    model_config = ConfigDict(extra="allow")

    run_id: str = Field(description="the run's id: <utc stamp>-<agent>-<model>-<hex>")
    scenario: str = Field(description="scenario name, <family>/<name>")
    scenario_version: str | None = Field(default=None, description="the scenario's `version`")
    scenario_sha: str | None = Field(default=None, description="sha256 over the scenario's files")
    spec_sha256: str | None = Field(
        default=None, description="sha256 of the scenario's SPEC, if any"
    )
    seed: str | None = Field(
        default=None, description="the secret seed: None until scoring is over"
    )
    commit: str = Field(description="the repository commit the workspace was set up at")
    baseline: str = Field(description="the workspace's baseline commit after setup steps")
    harness_version: str = Field(description="harness version that ran the trial")
    host: dict[str, str] = Field(
        default_factory=host_info, description="os, machine, python and cpus of the host"
    )
    started_at: str = Field(default_factory=now_iso, description="ISO 8601, UTC")
    sandbox: str | None = Field(
        default=None, description="the agent phase's backend; `sandboxes` holds each phase's"
    )
    sandboxes: dict[str, str] = Field(
        default_factory=dict, description="phase (agent, verify) -> backend it ran on"
    )
    images: dict[str, str | None] = Field(
        default_factory=dict, description="phase -> image id it ran in (None on the host)"
    )
    agent: str = Field(description="agents.yml name of the agent")
    agent_version: str = Field(description="the agent's reported version")
    model: str = Field(description="llms.yml name of the model ('none' for no model)")
    model_id: str | None = Field(default=None, description="the model id the fleet serves")
    job: str | None = Field(default=None, description="the `harness run` job, when part of one")
    trial_key: str | None = Field(default=None, description="the job ledger's key of this trial")
    repetition: int = Field(default=0, description="repetition index within the job")
    fleet: dict[str, Any] | None = Field(
        default=None, description="each host's artefact, when the fleet was used"
    )
    toolchain: dict[str, Any] | None = Field(
        default=None, description="pinned toolchain and dependencies (agent phase)"
    )
    turns: int = Field(default=1, description="agent turns (1, or more with continues)")

    def as_json(self) -> dict[str, Any]:
        """The JSON object of run.json (``fleet`` and ``toolchain`` only when set)."""
        unset = {k for k in ("fleet", "toolchain") if getattr(self, k) is None}
        return self.model_dump(mode="json", exclude=unset or None)


@dataclass
class Phase:
    name: str
    started_at: str
    start_mono: float
    ended_at: str | None = None
    duration_s: float | None = None
    outcome: str = "running"
    detail: str = ""

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Phase:
        """A recorded phase (its monotonic start is gone: it is only read back, not timed)."""
        return cls(
            data["name"],
            data["started_at"],
            0.0,
            data.get("ended_at"),
            data.get("duration_s"),
            data.get("outcome", "running"),
            data.get("detail", ""),
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "duration_s": None if self.duration_s is None else round(self.duration_s, 3),
            "outcome": self.outcome,
            "detail": self.detail,
        }


@dataclass
class RunDir:
    """One run's folder and its progress record."""

    path: Path
    run_id: str
    phases: list[Phase] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def create(cls, results_root: Path, scenario: str, run_id: str) -> RunDir:
        path = results_root / scenario / run_id
        (path / "agent").mkdir(parents=True, exist_ok=False)
        return cls(path, run_id)

    @classmethod
    def open(cls, path: Path) -> RunDir:
        """An existing run, with the phases and usage its progress.json recorded."""
        run = cls(path, path.name)
        progress = path / "progress.json"
        if progress.exists():
            data = read_json(progress)
            run.phases = [Phase.from_dict(p) for p in data.get("phases", [])]
            run.usage = data.get("usage", {})
        return run

    @property
    def agent_dir(self) -> Path:
        return self.path / "agent"

    @property
    def verify_dir(self) -> Path:
        return self.path / "verify"

    def write_run(self, meta: RunMeta) -> None:
        write_json(self.path / "run.json", meta.as_json())

    def read_run(self) -> RunMeta:
        return RunMeta.model_validate(read_json(self.path / "run.json"))

    def begin(self, name: str) -> Phase:
        phase = Phase(name, now_iso(), time.monotonic())
        self.phases.append(phase)
        self.save_progress()
        return phase

    def end(self, phase: Phase, outcome: str, detail: str = "") -> None:
        phase.ended_at = now_iso()
        phase.duration_s = time.monotonic() - phase.start_mono
        phase.outcome = outcome
        phase.detail = detail
        self.save_progress()

    def save_progress(self) -> None:
        write_json(
            self.path / "progress.json",
            {
                "run_id": self.run_id,
                "phases": [p.as_dict() for p in self.phases],
                "usage": self.usage,
            },
        )
