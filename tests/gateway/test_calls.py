"""The gateway's call records and helpers: error bodies, Retry-After, the prompt estimate
used for routing, log snippets, and an attempt's first-token time."""

from __future__ import annotations

import email.utils
import json
import time

import pytest

from harness.gateway.calls import (
    Attempt,
    Call,
    KeyInfo,
    error_response,
    prompt_estimate,
    retry_after_seconds,
    rnd,
    snippet,
)

pytestmark = pytest.mark.unit


def test_an_error_is_openai_shaped() -> None:
    resp = error_response(429, "slow down", "rate_limited", headers={"Retry-After": "2"})
    assert resp.status_code == 429 and resp.headers["retry-after"] == "2"
    body = json.loads(bytes(resp.body))
    assert body == {
        "error": {"message": "slow down", "type": "rate_limited", "code": "rate_limited"}
    }


def test_retry_after_as_seconds_or_a_date() -> None:
    assert retry_after_seconds("2.5") == 2.5 and retry_after_seconds("-3") == 0.0
    assert retry_after_seconds(None) is None and retry_after_seconds("soon") is None
    later = email.utils.formatdate(time.time() + 60, usegmt=True)
    assert 55 <= (retry_after_seconds(later) or 0) <= 61
    assert retry_after_seconds(email.utils.formatdate(0, usegmt=True)) == 0.0


def test_the_prompt_estimate_counts_messages_tool_calls_and_tools() -> None:
    plain = {"messages": [{"role": "user", "content": "x" * 400}]}
    assert prompt_estimate(plain) == (400 + 8) // 4
    calls = [{"id": "1", "function": {"name": "bash", "arguments": "{}"}}]
    with_calls = {"messages": [{"role": "assistant", "content": None, "tool_calls": calls}]}
    assert prompt_estimate(with_calls) == (len('""') + len(json.dumps(calls)) + 8) // 4
    tools = [{"type": "function", "function": {"name": "bash"}}]
    assert prompt_estimate({**plain, "tools": tools}) == (408 + len(json.dumps(tools))) // 4
    assert prompt_estimate({"messages": []}) == 1 and prompt_estimate({}) == 1
    assert prompt_estimate({"prompt": "y" * 400}) > 1


def test_snippets_are_one_line_and_bounded() -> None:
    assert snippet(b"a\n  b\tc") == "a b c"
    assert snippet("z" * 400, limit=10) == "zzzzzzz..."
    assert snippet(b"\xff ok") == "\ufffd ok"
    assert rnd(1.234567) == 1.2346 and rnd(None) is None


def test_the_first_token_time_is_the_first_chunk_with_output() -> None:
    call = Call("c1", KeyInfo("t"), "m", "m", "/v1/chat/completions", {}, True, False, [], None)  # type: ignore[arg-type]
    assert call.kind == "chat"
    attempt = Attempt(call, "h1", "http://h1", 0, True)
    attempt.mark_chunk(has_output=False)  # the role chunk
    assert attempt.first_chunk_s is not None and attempt.ttft_s is None
    time.sleep(0.01)
    attempt.mark_chunk(has_output=True)
    first_token = attempt.ttft_s
    time.sleep(0.01)
    attempt.mark_chunk(has_output=True)
    assert attempt.output_chunks == 2 and attempt.ttft_s == first_token is not None
    assert attempt.ttft_s > attempt.first_chunk_s
