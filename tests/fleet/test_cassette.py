"""Cassettes: subset matching with operators, readable diffs, and replies synthesised
from hand-written messages (streamed or not)."""

import json

import pytest

from harness.errors import UserError
from harness.fleet.cassette import (
    CassetteExhausted,
    CassetteMismatch,
    Replayer,
    load_interactions,
    match,
    mismatches,
)
from harness.fleet.router import Job
from harness.fleet.wire import ChunkAccumulator
from harness.gateway import Call, replay_payload

pytestmark = pytest.mark.unit

BODY = {
    "model": "m",
    "temperature": 0,
    "messages": [
        {"role": "system", "content": "You are a helpful agent."},
        {"role": "user", "content": "Please list the files in /src"},
    ],
}


def test_subset_and_operators():
    assert mismatches({"model": "m"}, BODY) == []
    assert (
        mismatches({"messages": [{"role": "system"}, {"content": {"$contains": "list"}}]}, BODY)
        == []
    )
    assert mismatches({"temperature": {"$any": True}}, BODY) == []
    assert mismatches({"model": {"$regex": "^m$"}}, BODY) == []
    probs = mismatches({"model": "x", "top_p": 1, "messages": [{}]}, BODY)
    assert probs == [
        "request.model: expected 'x', got 'm'",
        "request.top_p: missing (expected 1)",
        "request.messages: expected 1 item(s), got 2",
    ]


def test_last_message_and_endpoint():
    item = {
        "request": {"last_message": {"content": {"$contains": "files"}}},
        "response": {"content": "x"},
    }
    assert match(item, "/v1/chat/completions", BODY) == []
    assert match(item, "/v1/completions", BODY) == [
        "request.endpoint: expected '/v1/chat/completions', got '/v1/completions'"
    ]


def test_replayer_in_order_with_readable_diff(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(
        json.dumps(
            [
                {
                    "_comment": "first turn",
                    "request": {"last_message": {"content": "hi"}},
                    "response": {"content": "hello"},
                },
                {"response": {"content": "bye"}},
            ]
        )
    )
    rep = Replayer(path)
    with pytest.raises(CassetteMismatch) as err:
        rep.next("/v1/chat/completions", BODY)
    text = str(err.value)
    assert "request #1 does not match" in text
    assert (
        "request.last_message.content: expected 'hi', got 'Please list the files in /src'" in text
    )
    assert '-    "content": "hi"' in text and '+    "content": "Please list' in text
    assert rep.position == 0  # a mismatch does not consume the interaction
    assert rep.next("/v1/chat/completions", {"messages": [{"content": "hi"}]})[0] == 0
    assert rep.next("/v1/chat/completions", BODY)[0] == 1
    with pytest.raises(CassetteExhausted, match="request #3 has no recording"):
        rep.next("/v1/chat/completions", BODY)


def test_jsonl_and_load_errors(tmp_path):
    p = tmp_path / "c.jsonl"
    p.write_text('{"response": {"content": "a"}}\n\n{"response": {"text": "b"}}\n')
    assert len(load_interactions(p)) == 2
    bad = tmp_path / "bad.json"
    bad.write_text('[{"request": {}}]')
    with pytest.raises(UserError, match="needs a 'response'"):
        load_interactions(bad)
    bad.write_text("[{")
    with pytest.raises(UserError, match="not valid JSON"):
        load_interactions(bad)


def call(stream, include_usage=False, endpoint="/v1/chat/completions", body=None):
    return Call(
        "c",
        None,
        "m",
        "agent-name",
        endpoint,
        body or BODY,
        stream,
        include_usage,
        [],
        Job(None, 1, 1),
    )


TOOL_RESPONSE = {
    "content": "Let me look.",
    "tool_calls": [{"name": "bash", "arguments": {"command": "ls /src"}}],
}


def test_message_becomes_a_non_streamed_reply():
    status, body = replay_payload(TOOL_RESPONSE, call(False))
    assert status == 200 and body["object"] == "chat.completion"
    choice = body["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    tc = choice["message"]["tool_calls"][0]
    assert tc["type"] == "function" and tc["id"]
    assert json.loads(tc["function"]["arguments"]) == {"command": "ls /src"}
    assert body["model"] == "agent-name" and body["usage"]["prompt_tokens"] > 0


def test_message_becomes_sse_chunks_that_fold_back():
    status, chunks = replay_payload(TOOL_RESPONSE, call(True, include_usage=True))
    assert status == 200 and isinstance(chunks, list)
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]
    acc = ChunkAccumulator()
    for c in chunks:
        acc.add(c)
    msg = acc.body("chat")["choices"][0]["message"]
    assert msg["content"] == "Let me look."
    assert json.loads(msg["tool_calls"][0]["function"]["arguments"]) == {"command": "ls /src"}


def test_recorded_chunks_raw_text_and_errors():
    recorded = {
        "chunks": [
            {"id": "x", "choices": [{"index": 0, "delta": {"role": "assistant", "content": "a"}}]},
            {
                "id": "x",
                "choices": [{"index": 0, "delta": {"content": "b"}, "finish_reason": "stop"}],
            },
        ]
    }
    status, body = replay_payload(recorded, call(False))
    assert body["choices"][0]["message"]["content"] == "ab"
    status, chunks = replay_payload(recorded, call(True))
    assert len(chunks) == 2
    status, body = replay_payload(
        {"text": "xyz"}, call(False, endpoint="/v1/completions", body={"prompt": "p"})
    )
    assert body["choices"][0]["text"] == "xyz"
    status, body = replay_payload({"status": 429, "error": "slow down"}, call(False))
    assert status == 429 and body["error"]["message"] == "slow down"
