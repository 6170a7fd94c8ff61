"""``agents.yml`` and ``llms.yml``: who can run, with which models, at what price."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.errors import UserError
from harness.util.strict_yaml import format_validation_error, kebab, load_yaml_file

NO_MODEL = "none"
GGUF_PREFIX = "gguf:"  # --model gguf:PATH: a user's own GGUF, served by harness's engine


def gguf_model_name(spec: str) -> str:
    """The entrant name of ``gguf:PATH``: ``gguf-<file stem>`` (safe in paths and keys)."""
    stem = spec.removeprefix(GGUF_PREFIX).rstrip("/").rsplit("/", 1)[-1].removesuffix(".gguf")
    return "gguf-" + (re.sub(r"[^A-Za-z0-9_.-]+", "-", stem).strip("-") or "model")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", alias_generator=kebab, populate_by_name=True)


class AgentEntry(_Model):
    name: str
    version: str
    supports_llms: list[str] = Field(default_factory=list)
    image: str | None = None
    adapter: str | None = None  # "package.module:Class" for agents defined outside harness


class Cost(_Model):
    """US dollars per one million tokens."""

    input: float = 0.0
    cached_input: float = 0.0
    output: float = 0.0


class LLMEntry(_Model):
    name: str
    model: str
    reasoning_level: str | None = None
    agent_ids: dict[str, str] = Field(default_factory=dict)
    cost: Cost = Field(default_factory=Cost)
    local: bool = False
    # served by an engine harness starts (harness.fleet.builtin): "builtin" (the built-in
    # model) or the path of a GGUF file; None: served by the fleet file's hosts
    engine: str | None = None

    def id_for(self, agent: str) -> str:
        """The model identifier this agent should ask for."""
        return self.agent_ids.get(agent, self.model)


class AgentsFile(_Model):
    agents: list[AgentEntry]


class LLMsFile(_Model):
    llms: list[LLMEntry]


def _load(path: Path, model: type[_Model]) -> _Model:
    if not path.is_file():
        raise UserError("file not found", file=path, fix=f"create {path.name} in the project root")
    data = load_yaml_file(path)
    try:
        return model.model_validate(data)
    except ValidationError as err:
        raise format_validation_error(
            err, path, model, f"see the comments at the top of {path.name}"
        ) from None


def _unique(names: list[str], path: Path, field: str) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise UserError(
                f"'{name}' is listed twice",
                file=path,
                field=f"{field}.{name}",
                fix="keep one entry per name",
            )
        seen.add(name)


@dataclass(frozen=True)
class Registry:
    agents: dict[str, AgentEntry]
    llms: dict[str, LLMEntry]
    agents_path: Path
    llms_path: Path

    @classmethod
    def load(cls, root: Path) -> Registry:
        agents_path, llms_path = root / "agents.yml", root / "llms.yml"
        agents_file = _load(agents_path, AgentsFile)
        llms_file = _load(llms_path, LLMsFile)
        assert isinstance(agents_file, AgentsFile) and isinstance(llms_file, LLMsFile)
        _unique([a.name for a in agents_file.agents], agents_path, "agents")
        _unique([m.name for m in llms_file.llms], llms_path, "llms")
        reg = cls(
            {a.name: a for a in agents_file.agents},
            {m.name: m for m in llms_file.llms},
            agents_path,
            llms_path,
        )
        reg.check_coherence()
        return reg

    def check_coherence(self) -> None:
        """Every supported llm exists; every per-agent model id names a known agent."""
        for agent in self.agents.values():
            for llm in agent.supports_llms:
                if llm not in self.llms:
                    raise UserError(
                        f"agent '{agent.name}' supports unknown llm '{llm}'",
                        file=self.agents_path,
                        field=f"agents.{agent.name}.supports-llms",
                        fix=f"add '{llm}' to llms.yml or remove it here",
                    )
        for entry in self.llms.values():
            for agent_name in entry.agent_ids:
                if agent_name not in self.agents:
                    raise UserError(
                        f"llm '{entry.name}' has an id for unknown agent '{agent_name}'",
                        file=self.llms_path,
                        field=f"llms.{entry.name}.agent-ids",
                        fix=f"add '{agent_name}' to agents.yml or remove the key",
                    )

    def agent(self, name: str) -> AgentEntry:
        if name not in self.agents:
            raise UserError(
                f"unknown agent '{name}'",
                file=self.agents_path,
                field="--agent",
                fix=f"use one of: {', '.join(sorted(self.agents))}",
            )
        return self.agents[name]

    def llm(self, name: str, field: str = "--model") -> LLMEntry:
        if name not in self.llms:
            raise UserError(
                f"unknown model '{name}'",
                file=self.llms_path,
                field=field,
                fix=f"use one of: {', '.join(sorted(self.llms))}",
            )
        return self.llms[name]

    def resolve(self, agent_name: str, model_name: str | None) -> tuple[AgentEntry, LLMEntry]:
        """The agent and model for a run; the model defaults to the agent's first.
        ``gguf:PATH`` is a user's own model file, for any agent that uses a model."""
        agent = self.agent(agent_name)
        if model_name is not None and model_name.startswith(GGUF_PREFIX):
            if not [m for m in agent.supports_llms if m != NO_MODEL]:
                raise UserError(
                    f"agent '{agent.name}' uses no model",
                    field="--model",
                    fix="pick an agent that talks to a model, or drop --model",
                )
            name = gguf_model_name(model_name)
            return agent, LLMEntry(name=name, model=name, local=True, engine=model_name)
        if model_name is None:
            if not agent.supports_llms:
                raise UserError(
                    f"agent '{agent.name}' lists no models",
                    file=self.agents_path,
                    field=f"agents.{agent.name}.supports-llms",
                    fix="add a model or pass --model",
                )
            model_name = agent.supports_llms[0]
        self.llm(model_name)
        if model_name not in agent.supports_llms:
            raise UserError(
                f"agent '{agent.name}' does not support model '{model_name}'",
                file=self.agents_path,
                field=f"agents.{agent.name}.supports-llms",
                fix=f"use one of: {', '.join(agent.supports_llms)} or add it there",
            )
        return agent, self.llms[model_name]
