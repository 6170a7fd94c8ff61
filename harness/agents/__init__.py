"""Agents: the built-ins and one module per real agent CLI."""

from __future__ import annotations

import importlib

from harness.agents.base import Agent, AgentContext, AgentResult
from harness.agents.builtin import NopAgent, OracleAgent
from harness.errors import UserError

_BUILTINS: dict[str, type] = {"oracle": OracleAgent, "nop": NopAgent}


def load_adapter(spec: str, name: str) -> Agent:
    """Import ``package.module:Class`` (an agents.yml ``adapter``) and instantiate it."""
    module_name, _, attr = spec.partition(":")
    try:
        factory = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError, ValueError) as exc:
        raise UserError(
            f"cannot load adapter '{spec}': {exc}",
            file="agents.yml",
            field=f"agents.{name}.adapter",
            fix="write it as package.module:ClassName",
        ) from None
    agent: Agent = factory()
    return agent


def get_agent(name: str, adapter: str | None = None) -> Agent:
    """The adapter for ``name``; agents.yml decides whether it may run at all."""
    if adapter:
        return load_adapter(adapter, name)
    from harness.agents.registry import REAL_AGENTS  # they import this package

    known: dict[str, type] = {**_BUILTINS, **REAL_AGENTS}
    if name in known:
        agent: Agent = known[name]()
        return agent
    raise UserError(
        f"agent '{name}' is listed but harness has no adapter for it",
        file="agents.yml",
        field=f"agents.{name}.adapter",
        fix=f"use one of: {', '.join(sorted(known))}, or set adapter: package.module:Class",
    )


__all__ = ["Agent", "AgentContext", "AgentResult", "get_agent"]
