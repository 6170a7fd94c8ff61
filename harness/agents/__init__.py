"""Agents: the built-ins and one module per real agent CLI."""

from __future__ import annotations

from harness.agents.base import Agent, AgentContext, AgentResult
from harness.errors import UserError
from harness.util.registry import import_spec


def load_adapter(spec: str, name: str) -> Agent:
    """Import ``package.module:Class`` (an agents.yml ``adapter``) and instantiate it."""
    try:
        factory = import_spec(spec)
    except (ImportError, AttributeError, ValueError) as exc:
        raise UserError(
            f"cannot load adapter '{spec}': {exc}",
            file="agents.yml",
            field=f"agents.{name}.adapter",
            fix="write it as package.module:ClassName",
        ) from None
    agent: Agent = factory()  # type: ignore[operator]
    return agent


def get_agent(name: str, adapter: str | None = None) -> Agent:
    """The adapter for ``name``; agents.yml decides whether it may run at all."""
    if adapter:
        return load_adapter(adapter, name)
    from harness.agents.registry import AGENTS  # adapters import this package

    if name in AGENTS:
        agent: Agent = AGENTS.load(name, f"agents.{name}.adapter")()
        return agent
    raise UserError(
        f"agent '{name}' is listed but harness has no adapter for it",
        file="agents.yml",
        field=f"agents.{name}.adapter",
        fix=f"use one of: {', '.join(sorted(AGENTS.names()))}, "
        "or set adapter: package.module:Class",
    )


__all__ = ["Agent", "AgentContext", "AgentResult", "get_agent"]
