"""The cassette upstream's pure parts: a fault's one line, and a recorded response turned
into the reply of the call's endpoint (errors, plain and streamed chat, text, events)."""

from __future__ import annotations

from typing import Any

import pytest

from harness.fleet.cassette import CassetteExhausted, CassetteMismatch
from harness.gateway.calls import CHAT, COMPLETIONS, RESPONSES, Call, KeyInfo
from harness.gateway.replay import fault_text, replay_payload

pytestmark = pytest.mark.unit


def _call(endpoint: str, stream: bool = False, body: dict[str, Any] | None = None) -> Call:
    body = body or {"messages": [{"role": "user", "content": "fix it"}]}
    return Call("c1", KeyInfo("t"), "m-id", "m", endpoint, body, stream, False, [], None)  # type: ignore[arg-type]


def test_a_fault_names_the_cassette_the_request_and_the_first_difference() -> None:
    diff = "  same\n- model: 'a'\n+ model: 'b'\n"
    text = fault_text(CassetteMismatch(2, diff), "solve.jsonl")
    assert text.startswith("cassette solve.jsonl does not match request #3 (model: 'a'); ")
    assert "\n" not in text
    gone = fault_text(CassetteExhausted(4), "solve.jsonl")
    assert gone == "cassette solve.jsonl exhausted: request #5 has no recording: " + (
        "the cassette holds 4 interaction(s)"
    )


def test_a_recorded_error_is_replayed_as_an_error() -> None:
    assert replay_payload({"status": 429, "error": "slow"}, _call(CHAT)) == (
        429,
        {"error": {"message": "slow", "type": "replayed_error"}},
    )
    whole = {"error": {"message": "x", "type": "y"}}
    assert replay_payload({"status": 400, "error": whole}, _call(CHAT)) == (400, whole)
    assert replay_payload({"error": "no status"}, _call(CHAT))[0] == 500


def test_a_chat_message_plain_and_streamed() -> None:
    resp = {"message": {"content": "done"}, "finish_reason": "stop"}
    status, body = replay_payload(resp, _call(CHAT))
    assert status == 200 and body["model"] == "m"  # the name the client asked for
    assert body["choices"][0]["message"]["content"] == "done"
    assert body["usage"]["prompt_tokens"] > 0  # estimated when not recorded
    status, chunks = replay_payload(resp, _call(CHAT, stream=True))
    assert status == 200
    assert isinstance(chunks, list) and len(chunks) > 1
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert text == "done"


def test_text_completions_and_responses_events() -> None:
    call = _call(COMPLETIONS, body={"prompt": "def add("})
    status, body = replay_payload({"text": "a, b):"}, call)
    assert status == 200
    assert body["choices"][0]["text"] == "a, b):" and body["choices"][0]["finish_reason"] == "stop"
    events = [["response.created", {"x": 1}], ["response.completed", {"y": 2}]]
    assert replay_payload({"events": events}, _call(RESPONSES, stream=True)) == (200, events)
    assert replay_payload({"raw": {"id": "r"}}, _call(RESPONSES)) == (200, {"id": "r"})
