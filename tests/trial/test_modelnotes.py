"""The report's model notes: a model that answers calls offering tools in plain text
(no tool_calls) is named as the pair's limit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.trial.modelnotes import model_notes

pytestmark = pytest.mark.unit

TOOLS = ["bash"]


def _transcript(folder: Path, lines: list[dict[str, object]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "transcript.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))


def test_tools_answered_in_text_are_said_and_tool_calls_are_not(tmp_path: Path) -> None:
    run = tmp_path / "run"
    text = {"tools": TOOLS, "reply": {"role": "assistant", "content": "```bash\nls\n```"}}
    call = {"tools": TOOLS, "reply": {"tool_calls": [{"function": {"name": "bash"}}]}}
    _transcript(run / "gateway", [text, {"truncated": True}])
    _transcript(run / "gateway" / "turn-2", [text])
    (note,) = model_notes(run, "tiny")
    assert note.startswith("tiny answered all 2 call(s) that offered tools in plain text")
    _transcript(run / "gateway" / "turn-2", [call])
    assert model_notes(run, "tiny") == [
        "tiny answered 1 of 2 call(s) that offered tools in plain text (no tool_calls)"
    ]
    _transcript(run / "gateway", [call, {"reply": {"content": "no tools offered"}}])
    assert model_notes(run, "tiny") == []
    assert model_notes(tmp_path / "none", "tiny") == []
