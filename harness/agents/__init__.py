"""Agents: the built-ins and one module per real agent CLI."""

from __future__ import annotations

from harness.agents.base import Agent, AgentContext, AgentResult
from harness.agents.builtin import NopAgent, OracleAgent
from harness.errors import UserError

_BUILTINS: dict[str, type] = {"oracle": OracleAgent, "nop": NopAgent}


def get_agent(name: str) -> Agent:
    """The adapter for ``name``; agents.yml decides whether it may run at all."""
    if name in _BUILTINS:
        agent: Agent = _BUILTINS[name]()
        return agent
    raise UserError(
        f"agent '{name}' is listed but harness has no adapter for it",
        file="agents.yml",
        field=f"agents.{name}",
        fix=f"use one of: {', '.join(sorted(_BUILTINS))}",
    )


__all__ = ["Agent", "AgentContext", "AgentResult", "get_agent"]
