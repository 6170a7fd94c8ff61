"""Messages <-> chat completions translation (pure functions)."""

import json

import pytest

from harness.gateway.messages import (
    StreamTranslator,
    error_body,
    from_usage,
    to_chat,
    to_message,
    to_usage,
)

pytestmark = pytest.mark.unit


def test_request_with_system_tools_and_results():
    chat = to_chat(
        {
            "model": "claude-x",
            "max_tokens": 100,
            "system": [{"type": "text", "text": "Be brief."}, {"type": "text", "text": "Go."}],
            "stop_sequences": ["END"],
            "stream": True,
            "tools": [
                {"name": "bash", "description": "run", "input_schema": {"type": "object"}},
                {"type": "web_search_20250305", "name": "web_search"},
            ],
            "tool_choice": {"type": "tool", "name": "bash", "disable_parallel_tool_use": True},
            "messages": [
                {"role": "user", "content": "fix it"},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "hm", "signature": "s"},
                        {"type": "text", "text": "Looking."},
                        {"type": "tool_use", "id": "t1", "name": "bash", "input": {"c": "ls"}},
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "here:"},
                        {"type": "tool_result", "tool_use_id": "t1", "content": [
                            {"type": "text", "text": "a.py"}]},
                    ],
                },
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "t2", "is_error": True,
                                 "content": "boom"}],
                },
            ],
        }
    )  # fmt: skip
    assert chat["model"] == "claude-x" and chat["max_tokens"] == 100 and chat["stop"] == ["END"]
    assert chat["stream"] and chat["stream_options"] == {"include_usage": True}
    assert chat["tools"] == [
        {"type": "function",
         "function": {"name": "bash", "parameters": {"type": "object"}, "description": "run"}}
    ]  # fmt: skip
    assert chat["tool_choice"] == {"type": "function", "function": {"name": "bash"}}
    assert chat["parallel_tool_calls"] is False
    m = chat["messages"]
    assert m[0] == {"role": "system", "content": "Be brief.\nGo."}
    assert m[1] == {"role": "user", "content": "fix it"}
    assert m[2]["content"] == "Looking." and m[2]["tool_calls"][0]["id"] == "t1"
    assert json.loads(m[2]["tool_calls"][0]["function"]["arguments"]) == {"c": "ls"}
    # the tool result comes first, right after the assistant's call
    assert m[3] == {"role": "tool", "tool_call_id": "t1", "content": "a.py"}
    assert m[4] == {"role": "user", "content": "here:"}
    assert m[5] == {"role": "tool", "tool_call_id": "t2", "content": "Error: boom"}
    assert len(m) == 6


@pytest.mark.parametrize(
    ("choice", "mapped"),
    [({"type": "any"}, "required"), ({"type": "auto"}, "auto"), ({"type": "none"}, "none")],
)
def test_tool_choice(choice, mapped):
    body = {"messages": [], "tools": [{"name": "x", "input_schema": {}}], "tool_choice": choice}
    assert to_chat(body)["tool_choice"] == mapped


def test_reply_and_usage():
    chat = {
        "choices": [
            {
                "finish_reason": "tool_calls",
                "message": {
                    "content": "ok",
                    "tool_calls": [{"id": "c1", "function": {"name": "bash",
                                                             "arguments": '{"a": 1}'}}],
                },
            }
        ],
        "usage": {"prompt_tokens": 50, "completion_tokens": 5,
                  "prompt_tokens_details": {"cached_tokens": 20}},
    }  # fmt: skip
    msg = to_message(chat, "claude-x")
    assert msg["model"] == "claude-x" and msg["stop_reason"] == "tool_use"
    assert msg["content"] == [
        {"type": "text", "text": "ok"},
        {"type": "tool_use", "id": "c1", "name": "bash", "input": {"a": 1}},
    ]
    usage = {"input_tokens": 30, "output_tokens": 5, "cache_read_input_tokens": 20}
    assert msg["usage"] == {**usage, "cache_creation_input_tokens": 0}
    back = from_usage(msg["usage"])
    assert (back["prompt_tokens"], back["completion_tokens"]) == (50, 5)
    assert to_usage(None)["input_tokens"] == 0
    bad = {"choices": [{"finish_reason": "stop", "message": {"tool_calls": [
        {"id": "c", "function": {"name": "f", "arguments": "{oops"}}]}}]}  # fmt: skip
    assert to_message(bad, "m")["content"][0]["input"] == {"_raw": "{oops"}


def test_stream_events():
    tr = StreamTranslator("claude-x")
    evs = []
    for chunk in [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hi"}}]},
        {"choices": [{"index": 0, "delta": {"content": " there"}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "id": "c1", "function": {"name": "bash", "arguments": '{"co'}}]}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "function": {"arguments": 'mmand": "ls"}'}}]}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        {"choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 4}},
    ]:  # fmt: skip
        evs += tr.feed(chunk)
    evs += tr.finish()
    names = [n for n, _ in evs]
    assert names == [
        "message_start",
        "content_block_start", "content_block_delta", "content_block_delta",
        "content_block_stop",
        "content_block_start", "content_block_delta", "content_block_delta",
        "content_block_stop",
        "message_delta", "message_stop",
    ]  # fmt: skip
    assert evs[5][1]["content_block"] == {"type": "tool_use", "id": "c1", "name": "bash",
                                          "input": {}}  # fmt: skip
    assert evs[5][1]["index"] == 1
    args = "".join(d["delta"]["partial_json"] for n, d in evs if n == "content_block_delta"
                   and d["delta"]["type"] == "input_json_delta")  # fmt: skip
    assert json.loads(args) == {"command": "ls"}
    delta = evs[-2][1]
    assert delta["delta"]["stop_reason"] == "tool_use"
    assert delta["usage"]["output_tokens"] == 4 and delta["usage"]["input_tokens"] == 9


def test_empty_stream_and_errors():
    evs = StreamTranslator("m").finish()
    assert [n for n, _ in evs] == ["message_start", "message_delta", "message_stop"]
    err = error_body(429, {"error": {"message": "spent", "code": "budget_exceeded"}})
    assert err == {"type": "error", "error": {"type": "budget_exceeded", "message": "spent"}}
    assert error_body(404, {"error": {"message": "no"}})["error"]["type"] == "not_found_error"
    assert error_body(502, "x")["error"]["type"] == "api_error"
