"""Matrix expansion: agents x models x scenarios x seeds x repetitions -> trials.

The ``JobConfig`` is what a job *is*: it is stored in ``job.json`` and compared on
resume, so only fields that change which trials exist (or how they run) belong in it.
Concurrency and retry bounds are run-time knobs and are deliberately left out.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from harness.config.budget import Budget
from harness.config.entrants import GGUF_PREFIX, Registry
from harness.errors import UserError

DEFAULT_SEED = "default"


class JobConfig(BaseModel):
    """The matrix a job runs; equality of two configs decides whether a job may resume."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    agents: list[str]
    models: list[str] | None = None  # None: each agent's first supported model
    scenarios: list[str]
    reps: int = 1
    seeds: list[str] | None = None  # None: every trial draws a fresh seed
    sandbox: str = "docker"
    budget: Budget | None = None  # --budget-* limits over each scenario's own (harden, #16)
    replay: str | None = None  # a cassette every trial's gateway serves (absolute path)

    def fingerprint(self) -> str:
        """A short stable hash of the configuration (the default job name uses it)."""
        unset = {k for k in ("budget", "replay") if getattr(self, k) is None}
        data = self.model_dump(mode="json", exclude=unset or None)
        text = json.dumps(data, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:10]


@dataclass(frozen=True)
class Trial:
    """One scenario x entrant x seed x repetition: the unit of work and of resume."""

    scenario: str
    agent: str
    model: str
    seed: str | None
    repetition: int

    @functools.cached_property
    def key(self) -> str:
        """The trial's name in the ledger and in ``run.json`` (``trial_key``)."""
        seed = self.seed or DEFAULT_SEED
        return f"{self.scenario}|{self.agent}|{self.model}|{seed}|r{self.repetition}"

    @functools.cached_property
    def slug(self) -> str:
        """A file-name-safe, unique form of the key (ledger files, workspaces)."""
        safe = re.sub(r"[^A-Za-z0-9.-]+", "-", self.key).strip("-")
        return f"{safe[:80]}-{hashlib.sha256(self.key.encode()).hexdigest()[:6]}"


@dataclass(frozen=True)
class Plan:
    trials: list[Trial]
    skipped: list[str]  # "agent + model: reason", one per pair left out


def entrant_pairs(config: JobConfig, registry: Registry) -> tuple[list[tuple[str, str]], list[str]]:
    """The (agent, model) pairs to run and a note for every pair the agent cannot run."""
    pairs: list[tuple[str, str]] = []
    skipped: list[str] = []
    for agent_name in config.agents:
        entry = registry.agent(agent_name)  # unknown agent: UserError
        models = config.models or entry.supports_llms[:1]
        if not models:
            skipped.append(f"{agent_name}: lists no models in agents.yml")
        for model in models:
            if model.startswith(GGUF_PREFIX):  # a user's GGUF: any model-using agent
                registry.resolve(agent_name, model)  # an agent without a model: UserError
                pairs.append((agent_name, model))
                continue
            registry.llm(model, field="--models")  # unknown model: UserError
            if model not in entry.supports_llms:
                skipped.append(f"{agent_name} + {model}: not in the agent's supports-llms")
                continue
            pairs.append((agent_name, model))
    return pairs, skipped


def expand(config: JobConfig, registry: Registry) -> Plan:
    """Every trial of the matrix, in a stable order (scenario-major, so that results
    for one scenario arrive together)."""
    if config.reps < 1:
        raise UserError("--reps must be at least 1", field="--reps", fix="e.g. --reps 3")
    pairs, skipped = entrant_pairs(config, registry)
    seeds: list[str | None] = list(config.seeds) if config.seeds else [None]
    trials = [
        Trial(scenario, agent, model, seed, rep)
        for scenario in config.scenarios
        for agent, model in pairs
        for seed in seeds
        for rep in range(config.reps)
    ]
    return Plan(trials, skipped)
