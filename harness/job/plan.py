"""Matrix expansion: agents x models x scenarios x seeds x repetitions -> trials.

The ``JobConfig`` is what a job *is*: it is stored in ``job.json`` and compared on
resume, so only fields that change which trials exist (or how they run) belong in it.
Concurrency and retry bounds are run-time knobs and are deliberately left out.
"""

from __future__ import annotations

import fnmatch
import functools
import hashlib
import json
import re
from collections.abc import Sequence
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
    agent_env: dict[str, str] | None = None  # --agent-env KEY=VAL for every trial's agent
    agent_args: list[str] | None = None  # --agent-arg ARG for every trial's agent

    def fingerprint(self) -> str:
        """A short stable hash of the configuration (the default job name uses it)."""
        optional = ("budget", "replay", "agent_env", "agent_args")
        unset = {k for k in optional if getattr(self, k) is None}
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


def _is_glob(name: str) -> bool:
    return any(c in name for c in "*?[")


def select_scenarios(
    names: Sequence[str],
    available: Sequence[str],
    *,
    all_: bool = False,
    exclude: Sequence[str] = (),
    limit: int | None = None,
) -> list[str]:
    """The scenarios a job runs: ``names`` (names or fnmatch globs, as ``report`` takes
    them; a glob never picks a smoke scenario unless it names ``smoke/``), or every
    non-smoke scenario with ``all_``; then less those matching an ``exclude`` glob;
    then the first ``limit``. Order: as given, a glob's matches in name order."""
    if limit is not None and limit < 1:
        raise UserError("--limit must be at least 1", field="--limit", fix="e.g. --limit 5")
    if all_:
        names = ["*"]
    picked: list[str] = []
    for name in names:
        if not _is_glob(name):
            found = [name]  # a plain name is checked by loading it
        else:
            smoke = name.startswith("smoke/")
            found = [
                s
                for s in sorted(available)
                if fnmatch.fnmatchcase(s, name) and (smoke or not s.startswith("smoke/"))
            ]
            if not found:
                raise UserError(
                    f"'{name}' matches no scenario",
                    field="--scenarios",
                    fix="see `harness list` for names, e.g. --scenarios 'py/*'",
                )
        picked += [s for s in found if s not in picked]
    kept = [s for s in picked if not any(fnmatch.fnmatchcase(s, x) for x in exclude)]
    if picked and not kept:
        raise UserError(
            f"--exclude {','.join(exclude)} leaves no scenario of {len(picked)}",
            field="--exclude",
            fix="exclude fewer scenarios",
        )
    return kept[:limit] if limit is not None else kept


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
