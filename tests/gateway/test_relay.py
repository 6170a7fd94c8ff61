"""The stream relay's chunk handling: a chunk relabelled with the model the client asked
for, usage dropped unless asked for, upstream events accounted (first token, usage, the end)
and an error event made a broken stream."""

from __future__ import annotations

import json

import httpx
import pytest

from harness.fleet import wire
from harness.gateway.calls import CHAT, Attempt, Call, KeyInfo
from harness.gateway.relay import client_chunk, take_chunk

pytestmark = pytest.mark.unit


def _call(requested: str = "m", include_usage: bool = False) -> Call:
    return Call("c1", KeyInfo("t"), "org/m", requested, CHAT, {}, True, include_usage, [], None)  # type: ignore[arg-type]


def _chunk(content: str | None = None, usage: dict[str, int] | None = None) -> dict[str, object]:
    choices = [] if content is None else [{"index": 0, "delta": {"content": content}}]
    return {"model": "org/m", "choices": choices, **({"usage": usage} if usage else {})}


def test_a_chunk_as_the_client_sees_it() -> None:
    assert client_chunk(_call(), _chunk("hi"))["model"] == "m"  # type: ignore[index]
    assert client_chunk(_call(""), _chunk("hi"))["model"] == "org/m"  # type: ignore[index]
    usage_only = _chunk(usage={"prompt_tokens": 3})
    assert client_chunk(_call(), dict(usage_only)) is None
    assert client_chunk(_call(include_usage=True), dict(usage_only)) is not None
    both = client_chunk(_call(), _chunk("x", usage={"prompt_tokens": 3}))
    assert both is not None and "usage" not in both and both["choices"]


def test_upstream_events_are_accounted() -> None:
    att = Attempt(_call(), "h1", "http://h1", 0, True)
    acc = wire.ChunkAccumulator()
    assert take_chunk(att, acc, json.dumps(_chunk(None))) is not None
    assert att.ttft_s is None and att.first_chunk_s is not None
    take_chunk(att, acc, json.dumps(_chunk("a")))
    take_chunk(att, acc, json.dumps(_chunk("b", usage={"prompt_tokens": 7})))
    assert att.ttft_s is not None and att.output_chunks == 2 and att.usage == {"prompt_tokens": 7}
    assert acc.body("chat")["choices"][0]["message"]["content"] == "ab"
    assert take_chunk(att, acc, " [DONE] ") is None and att.done
    with pytest.raises(httpx.RemoteProtocolError, match="upstream error event"):
        take_chunk(att, acc, json.dumps({"error": {"message": "overloaded"}}))
