"""The agent protocol: an agent gets a context and changes the workspace."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from harness.config.entrants import LLMEntry
from harness.sandbox.base import Sandbox
from harness.scenario.model import LoadedScenario

AgentExit = Literal[
    "completed",
    "timeout",
    "context_window_exceeded",
    "rate_limited",
    "crashed",
    "limit",  # a sandbox limit stopped it (harness.trial.containment)
    "budget",  # the trial's budget was exhausted
]


@dataclass
class AgentContext:
    """What an agent run may use. ``sandbox`` is started; its project dir is the workspace."""

    scenario: LoadedScenario
    workspace: Path
    sandbox: Sandbox
    model: LLMEntry
    seed: str
    out_dir: Path
    timeout_s: float
    gateway_url: str | None = None
    api_key: str | None = None
    instructions: str = ""
    extra_env: dict[str, str] = field(default_factory=dict)  # --agent-env, over the adapter's
    extra_args: list[str] = field(default_factory=list)  # --agent-arg, after the adapter's argv


@dataclass
class AgentResult:
    exit: AgentExit
    detail: str = ""
    returncode: int | None = 0
    self_reported_usage: dict[str, Any] = field(default_factory=dict)


class Agent(Protocol):
    name: str

    def version(self) -> str:
        """The version the agent itself reports (checked against the pin)."""
        ...

    def image(self, toolchain: str) -> str | None:
        """Image name for the agent phase (None: the scenario's environment image)."""
        ...

    def run(self, ctx: AgentContext) -> AgentResult: ...
