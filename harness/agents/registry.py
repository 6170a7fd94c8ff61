"""The agents harness has adapters for, by their agents.yml name, imported lazily.

``AGENTS`` is the one registry (``harness.util.registry``): a built-in name ->
``module:Class`` map, plus the ``harness.agents`` entry-point group for plugin packages
and ``AGENTS.register`` at run time. Nothing here imports an adapter until its name is
asked for. An agents.yml ``adapter: pkg.mod:Class`` entry still overrides the map.
"""

from __future__ import annotations

from harness.util.registry import LazyMap, Registry

BUILTIN: dict[str, str] = {
    "oracle": "harness.agents.builtin:OracleAgent",
    "nop": "harness.agents.builtin:NopAgent",
}
REAL: dict[str, str] = {
    "mini-swe-agent": "harness.agents.mini:MiniAgent",
    "aider": "harness.agents.aider:AiderAgent",
    "codex": "harness.agents.codex:CodexAgent",
    "opencode": "harness.agents.opencode:OpencodeAgent",
    "claude-code": "harness.agents.claude:ClaudeCodeAgent",
    "qwen-code": "harness.agents.qwen:QwenCodeAgent",
    "goose": "harness.agents.goose:GooseAgent",
    "crush": "harness.agents.crush:CrushAgent",
    "openhands": "harness.agents.openhands:OpenHandsAgent",
}
AGENTS: Registry[type] = Registry(
    "agent", "harness.agents", {**BUILTIN, **REAL}, field="agents.yml adapter"
)
# the real agent CLIs (not the built-ins) as name -> class, each imported on first access
REAL_AGENTS: LazyMap[type] = LazyMap(Registry("agent", "harness.agents.real", REAL))

__all__ = ["AGENTS", "BUILTIN", "REAL", "REAL_AGENTS"]
