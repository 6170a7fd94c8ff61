"""The real agent CLIs harness has adapters for, by their agents.yml name.

``harness.agents.get_agent`` looks names up here beside the built-ins; an agents.yml
``adapter:`` entry still overrides it.
"""

from __future__ import annotations

from harness.agents.aider import AiderAgent
from harness.agents.claude import ClaudeCodeAgent
from harness.agents.codex import CodexAgent
from harness.agents.crush import CrushAgent
from harness.agents.goose import GooseAgent
from harness.agents.mini import MiniAgent
from harness.agents.opencode import OpencodeAgent
from harness.agents.openhands import OpenHandsAgent
from harness.agents.qwen import QwenCodeAgent

REAL_AGENTS: dict[str, type] = {
    MiniAgent.name: MiniAgent,
    AiderAgent.name: AiderAgent,
    CodexAgent.name: CodexAgent,
    OpencodeAgent.name: OpencodeAgent,
    ClaudeCodeAgent.name: ClaudeCodeAgent,
    QwenCodeAgent.name: QwenCodeAgent,
    GooseAgent.name: GooseAgent,
    CrushAgent.name: CrushAgent,
    OpenHandsAgent.name: OpenHandsAgent,
}

__all__ = ["REAL_AGENTS"]
