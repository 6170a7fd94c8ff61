"""What a trial's model traffic says about the agent x model pair, as reason lines for
the report: calls offered tools that the model answered in plain text (no ``tool_calls``,
as a small local model whose chat template leaves the tools out does), and replies cut
at their token limit. Read from the gateway's transcripts (``gateway/transcript.jsonl``
and each later turn's folder); nothing is charged or changed, the lines only say why.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def _lines(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    out = []
    for raw in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            item = json.loads(raw)
        except ValueError:
            continue
        if isinstance(item, dict) and not item.get("truncated"):
            out.append(item)
    return out


def transcript_lines(run_dir: Path) -> list[dict[str, Any]]:
    """Every recorded call of the trial, turn by turn."""
    gateway = run_dir / "gateway"
    if not gateway.is_dir():
        return []
    folders = [gateway, *sorted(p for p in gateway.iterdir() if p.is_dir())]
    return [line for folder in folders for line in _lines(folder / "transcript.jsonl")]


def model_notes(run_dir: Path, model: str) -> list[str]:
    """Reason lines (empty when the model used the tools it was given, or none were)."""
    offered = answered_in_text = 0
    for line in transcript_lines(run_dir):
        reply = line.get("reply")
        if not line.get("tools") or not isinstance(reply, dict):
            continue
        offered += 1
        if not reply.get("tool_calls"):
            answered_in_text += 1
    if offered and answered_in_text == offered:
        return [
            f"{model} answered all {offered} call(s) that offered tools in plain text "
            "(no tool_calls): it cannot drive this agent's tools"
        ]
    if answered_in_text:
        return [
            f"{model} answered {answered_in_text} of {offered} call(s) that offered tools "
            "in plain text (no tool_calls)"
        ]
    return []
