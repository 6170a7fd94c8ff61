"""The look-alike host's parts: prompts, tokens, tool choice, faults and its prefix cache
(testing/lmstudio/state.py)."""

from __future__ import annotations

import json
import logging

import pytest

from harness.testing.lmstudio.state import (
    CHARS_PER_TOKEN,
    WORDS,
    Faults,
    HostSpec,
    HostState,
    SimulatedDrop,
    _error,
    _QuietDrops,
    _sse,
    _usage,
    chosen_tool,
    count_tokens,
    render,
    reply_tokens,
)

pytestmark = pytest.mark.unit


def test_a_chat_renders_prefix_stable() -> None:
    first = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
    calls = [{"id": "1", "function": {"name": "f"}}]
    more = [*first, {"role": "assistant", "content": None, "tool_calls": calls}]
    assert render(first) == "<|system|>be brief\n<|user|>hi\n"
    assert render(more).startswith(render(first))
    assert json.dumps(calls, sort_keys=True) in render(more)
    parts = [{"content": [{"type": "text", "text": "a"}, "junk", {"text": "b"}]}]
    assert render(parts) == "<|user|>ab\n"


def test_tokens_are_four_characters_rounded_up() -> None:
    assert CHARS_PER_TOKEN == 4
    assert [count_tokens("x" * n) for n in (0, 1, 4, 5)] == [0, 1, 1, 2]
    assert reply_tokens(len(WORDS) + 1) == [f"{w} " for w in WORDS] + [f"{WORDS[0]} "]


def test_the_tool_to_call() -> None:
    tools = [{"function": {"name": "first"}}, {"function": {"name": "second"}}]
    assert chosen_tool({"tools": tools, "tool_choice": "required"}) == "first"
    named = {"type": "function", "function": {"name": "second"}}
    assert chosen_tool({"tools": tools, "tool_choice": named}) == "second"
    assert chosen_tool({"tools": tools, "tool_choice": "auto"}) is None
    assert chosen_tool({"tools": tools}) is None
    assert chosen_tool({"tool_choice": "required"}) is None


def test_faults_are_drawn_from_a_seeded_generator_in_order() -> None:
    state = HostState(HostSpec())
    assert [state.draw_fault() for _ in range(20)] == [None] * 20
    state.set_faults(error_rate=1.0)
    assert state.draw_fault() == "error"
    state.set_faults(error_rate=0.0, rate_limit_rate=1.0)
    assert state.draw_fault() == "rate_limit"
    state.set_faults(rate_limit_rate=0.0, drop_rate=1.0)
    assert state.draw_fault() == "drop"
    state.set_faults(error_rate=0.3, rate_limit_rate=0.3, drop_rate=0.3, seed=7)
    one = [state.draw_fault() for _ in range(50)]
    state.set_faults(seed=7)  # the same seed: the same draws
    assert [state.draw_fault() for _ in range(50)] == one
    assert {"error", "rate_limit", "drop", None} == set(one)
    with pytest.raises(ValueError, match="unknown fault"):
        state.set_faults(eror_rate=1.0)
    assert state.faults.drop_after == Faults().drop_after  # kept through the changes


def test_the_prefix_cache_finds_the_longest_prefix_and_forgets_the_oldest() -> None:
    state = HostState(HostSpec(cache_entries=2))
    assert state.cached_prefix("anything") == 0
    state.remember("a" * 40)
    state.remember("a" * 20 + "b" * 20)
    assert state.cached_prefix("a" * 40 + "c") == 10  # 40 chars: 10 tokens
    assert state.cached_prefix("a" * 20 + "b" * 8) == 7
    assert state.cached_prefix("a" * 3) == 0  # under one token
    state.remember("c" * 16)  # the third entry pushes out the oldest
    assert state.cached_prefix("a" * 40) == 5 and len(state.cache) == 2
    state.remember("a" * 20 + "b" * 20)  # used again: the newest now
    state.remember("d" * 4)
    assert "c" * 16 not in state.cache and state.cached_prefix("a" * 20 + "b" * 20) == 10


def test_replies_are_shaped_as_the_host_shapes_them() -> None:
    assert _usage(10, 4, 3) == {
        "prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13,
        "prompt_tokens_details": {"cached_tokens": 4},
    }  # fmt: skip
    reply = _error(429, "slow down", {"Retry-After": "2"})
    assert reply.status_code == 429 and reply.headers["retry-after"] == "2"
    assert json.loads(bytes(reply.body)) == {
        "error": {"message": "slow down", "type": "test_fault"}
    }
    assert _sse({"a": 1}) == b'data: {"a": 1}\n\n'


def test_a_simulated_drop_is_kept_out_of_the_log() -> None:
    quiet = _QuietDrops()

    def record(exc: BaseException | None) -> logging.LogRecord:
        info = (type(exc), exc, None) if exc else None
        return logging.LogRecord("uvicorn", logging.ERROR, "f", 1, "m", None, info)

    assert not quiet.filter(record(SimulatedDrop()))
    assert not quiet.filter(record(ExceptionGroup("g", [SimulatedDrop()])))
    assert quiet.filter(record(RuntimeError("real")))
    assert quiet.filter(record(None))
