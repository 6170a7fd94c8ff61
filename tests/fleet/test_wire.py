"""OpenAI wire shapes: SSE decoded and encoded, usage numbers of either API, streamed chunks
folded into one reply (tool calls by index), hand-written tool calls put in wire form, and
a message streamed as chunks that fold back into the same message."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.fleet.wire import (
    DONE,
    ChunkAccumulator,
    SSEDecoder,
    has_output,
    message_chunks,
    normalize_tool_calls,
    sse_bytes,
    usage_numbers,
)

pytestmark = pytest.mark.unit


def test_sse_round_trips_events_data_lines_and_comments() -> None:
    dec = SSEDecoder()
    got = []
    raw = sse_bytes({"a": 1}, "response.created") + b": keep-alive\n\n" + b"data: x\ndata: y\r\n\n"
    for line in (raw + DONE).decode().split("\n"):
        item = dec.feed(line)
        if item is not None:
            got.append(item)
    assert got == [("response.created", '{"a":1}'), (None, "x\ny"), (None, "[DONE]")]
    dec.feed("data: tail")
    assert dec.flush() == (None, "tail") and dec.flush() is None


def test_usage_numbers_of_chat_and_responses() -> None:
    chat = {
        "prompt_tokens": 10,
        "completion_tokens": 3,
        "prompt_tokens_details": {"cached_tokens": 4},
    }
    responses = {
        "input_tokens": 7,
        "output_tokens": 2,
        "input_tokens_details": {"cached_tokens": 1},
    }
    assert usage_numbers(chat) == (10, 4, 3) and usage_numbers(responses) == (7, 1, 2)
    assert usage_numbers(None) == (0, 0, 0) and usage_numbers({"prompt_tokens": None}) == (0, 0, 0)


def _delta(**delta: object) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta}]}


def test_chunks_fold_into_one_reply_with_tool_calls_by_index() -> None:
    acc = ChunkAccumulator()
    call = {"index": 1, "id": "c1", "function": {"name": "ba"}}
    chunks = [
        {"id": "x1", "model": "up", "created": 5, **_delta(role="assistant")},
        _delta(content="Let me "),
        _delta(content="look."),
        _delta(tool_calls=[call]),
        _delta(tool_calls=[{"index": 1, "function": {"name": "sh", "arguments": '{"c'}}]),
        _delta(tool_calls=[{"index": 1, "function": {"arguments": '": 1}'}}]),
        {**_delta(), "usage": {"prompt_tokens": 9}},
    ]
    chunks[-1]["choices"][0]["finish_reason"] = "tool_calls"
    assert not has_output(chunks[0]) and has_output(chunks[1]) and has_output(chunks[3])
    for c in chunks:
        acc.add(c)
    assert acc.finished() and acc.chunks == 7
    body = acc.body("chat", "m")
    assert (body["id"], body["model"], body["created"], body["object"]) == (
        "x1",
        "m",
        5,
        "chat.completion",
    )
    msg = body["choices"][0]["message"]
    assert msg["content"] == "Let me look." and body["choices"][0]["finish_reason"] == "tool_calls"
    assert msg["tool_calls"][0]["id"] is None  # index 0 never sent: a placeholder
    assert msg["tool_calls"][1]["function"] == {"name": "bash", "arguments": '{"c": 1}'}
    assert body["usage"] == {"prompt_tokens": 9}


def test_text_chunks_fold_and_an_empty_stream_is_an_empty_reply() -> None:
    acc = ChunkAccumulator()
    for piece in ("def ", "add"):
        acc.add({"choices": [{"index": 0, "text": piece}]})
    assert acc.body("text")["choices"][0]["text"] == "def add" and not acc.finished()
    empty = ChunkAccumulator().body("chat", "m")
    assert empty["choices"] == [] and empty["id"].startswith("gw-")


def test_hand_written_tool_calls_in_wire_form() -> None:
    written = [
        {"name": "bash", "arguments": {"cmd": "ls"}},
        {"id": "k", "function": {"name": "e", "arguments": "{}"}},
    ]
    calls = normalize_tool_calls(written, seed="s")
    assert calls == [
        {
            "id": "s_0",
            "type": "function",
            "function": {"name": "bash", "arguments": '{"cmd": "ls"}'},
        },
        {"id": "k", "type": "function", "function": {"name": "e", "arguments": "{}"}},
    ]


def test_a_streamed_message_folds_back_into_itself() -> None:
    message = {"content": "x" * 50, "tool_calls": [{"name": "bash", "arguments": {"cmd": "ls"}}]}
    chunks = message_chunks(message, model="m", usage={"prompt_tokens": 3}, include_usage=True)
    acc = ChunkAccumulator()
    for c in chunks:
        acc.add(c)
    folded = acc.body("chat")["choices"][0]
    assert folded["message"]["content"] == "x" * 50 and folded["finish_reason"] == "tool_calls"
    assert json.loads(folded["message"]["tool_calls"][0]["function"]["arguments"]) == {"cmd": "ls"}
    assert acc.usage == {"prompt_tokens": 3}
