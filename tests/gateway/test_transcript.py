"""The gateway's transcript: what is new per call, bounded texts and size, replies read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.gateway.transcript import Transcript, cut, reply_of


@pytest.mark.unit
def test_transcript_keeps_what_is_new_per_call_and_stays_bounded(tmp_path: Path) -> None:
    path = tmp_path / "transcript.jsonl"
    t = Transcript(path, max_bytes=10_000)
    first = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "fix it"}]
    t.add("c1", "tr", "/v1/chat/completions", {"messages": first}, {"content": "ok"})
    second = [*first, {"role": "assistant", "content": "ok"}, {"role": "tool", "content": "x"}]
    t.add("c2", "tr", "/v1/chat/completions", {"messages": second}, None, "boom")
    t.add(
        "c3", "tr", "/v1/chat/completions", {"messages": [{"role": "user", "content": "y" * 9000}]}
    )
    t.close()
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert [m["content"] for m in lines[0]["messages"]] == ["be brief", "fix it"]
    assert [m["role"] for m in lines[1]["messages"]] == ["assistant", "tool"]
    assert lines[1]["first_message"] == 2 and lines[1]["error"] == "boom"
    assert lines[2]["messages"][0]["content"].endswith("[9,000 chars]")  # a new conversation
    t2 = Transcript(tmp_path / "small.jsonl", max_bytes=200)
    for n in range(5):
        t2.add(f"c{n}", "tr", "/v1/chat/completions", {"messages": [{"content": "z" * 80}]})
    t2.close()
    small = (tmp_path / "small.jsonl").read_text().splitlines()
    assert json.loads(small[-1])["truncated"] is True and len(small) <= 3


@pytest.mark.unit
def test_the_reply_of_a_chat_or_text_completion() -> None:
    chat = {
        "choices": [
            {
                "finish_reason": "tool_calls",
                "message": {"role": "assistant", "content": None, "tool_calls": [{"id": "1"}]},
            }
        ]
    }
    assert reply_of(chat) == {"finish_reason": "tool_calls", "tool_calls": [{"id": "1"}]}
    text = {"choices": [{"finish_reason": "stop", "text": "done"}]}
    assert reply_of(text) == {"finish_reason": "stop", "content": "done"}
    assert reply_of(None) is None and reply_of({"choices": ["x"]}) is None
    assert reply_of({}) == {"finish_reason": None}


@pytest.mark.unit
def test_tools_offered_are_named_and_nothing_is_kept_without_a_path(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    t = Transcript(path)
    tools = [{"type": "function", "function": {"name": "bash"}}, {"name": "edit"}, "junk"]
    t.add("c1", None, "/v1/responses", {"input": "hi", "tools": tools})
    t.close()
    (line,) = [json.loads(x) for x in path.read_text().splitlines()]
    assert line["tools"] == ["bash", "edit"] and line["messages"] == [
        {"role": "user", "content": "hi"}
    ]
    nowhere = Transcript(None)
    nowhere.add("c1", None, "/v1/chat/completions", {"messages": []})
    assert nowhere.written == 0
    assert cut({"a": ["x" * 5]}, limit=3) == {"a": ["xxx... [5 chars]"]}
