"""Bodies are relayed as the bytes they came in, with only the model's name changed; where
that cannot be done safely in the bytes, the body is serialised anew (and still right)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from harness.fleet.config import parse_fleet
from harness.gateway import GatewayServer
from harness.gateway.bodies import streamed_with_usage, with_model
from harness.util.serving import ThreadedServer


def _raw(text: str) -> tuple[bytes, dict[str, Any]]:
    raw = text.encode()
    return raw, json.loads(raw)


@pytest.mark.unit
def test_only_the_top_level_model_changes_byte_for_byte() -> None:
    raw, body = _raw('{ "messages": [{"role": "user", "content": "hi"}],\n  "model" : "coder" }')
    out = with_model(raw, body, "org/big-model")
    assert out == raw.replace(b'"model" : "coder"', b'"model":"org/big-model"')
    assert json.loads(out or b"") == {**body, "model": "org/big-model"}


@pytest.mark.unit
def test_the_same_model_relays_the_bytes_as_they_are() -> None:
    raw, body = _raw('{"model":  "m", "x": 1.50}')
    assert with_model(raw, body, "m") is raw


@pytest.mark.unit
@pytest.mark.parametrize(
    "text",
    [
        '{"model": "coder", "extra": {"model": "coder"}}',  # a nested key with the value
        '{"mod\\u0065l": "coder", "extra": {"model": "coder"}}',  # the key spelled twice
        '{"model": "c\\u006fder"}',  # the value escaped: not found as spelled
        '{"messages": []}',  # no model at all
        '{"model": 7}',  # not a name
        '{"model": "x", "model": "coder"}',  # duplicate keys: json keeps the last
    ],
)
def test_a_body_that_cannot_be_changed_in_its_bytes_is_left_to_serialisation(text: str) -> None:
    raw, body = _raw(text)
    assert with_model(raw, body, "other") is None


@pytest.mark.unit
def test_a_nested_model_string_inside_content_is_not_touched() -> None:
    raw, body = _raw(
        '{"messages": [{"content": "say \\"model\\": \\"coder\\""}], "model": "coder"}'
    )
    out = with_model(raw, body, "up")
    assert out is not None
    assert json.loads(out) == {**body, "model": "up"}


@pytest.mark.unit
def test_a_stream_gets_include_usage_put_first_or_kept() -> None:
    raw, body = _raw('{"model": "m", "stream": true}')
    out = streamed_with_usage(raw, body)
    assert out == b'{"stream_options":{"include_usage":true},"model": "m", "stream": true}'
    raw, body = _raw('{"stream": true, "stream_options": {"include_usage": true}}')
    assert streamed_with_usage(raw, body) is raw
    for text in (
        '{"stream": true, "stream_options": {"include_usage": false}}',  # to be overridden
        '{"stream": 1}',  # not the literal true the host is sent
    ):
        raw, body = _raw(text)
        assert streamed_with_usage(raw, body) is None


# ---- through the gateway --------------------------------------------------------------
REPLY = (
    b'{"id": "r1",  "object": "chat.completion", "model": "host/model-q4",\n'
    b' "choices": [{"index": 0, "message": {"role": "assistant", "content": "d\xc3\xa9j\xc3\xa0"},'
    b' "finish_reason": "stop"}], "usage": {"prompt_tokens": 5, "completion_tokens": 2,'
    b' "total_tokens": 7}, "x_float": 1.50}'
)


@pytest.fixture
def host() -> Iterator[tuple[str, list[bytes]]]:
    """A host that keeps the bytes of every request and answers with ``REPLY``'s bytes."""
    seen: list[bytes] = []

    async def chat(request: Request) -> Response:
        seen.append(await request.body())
        return Response(REPLY, media_type="application/json")

    async def models(request: Request) -> Response:
        return JSONResponse({"data": [{"id": "host/model-q4"}]})

    app = Starlette(
        routes=[
            Route("/v1/chat/completions", chat, methods=["POST"]),
            Route("/v1/models", models),
        ]
    )
    with ThreadedServer(app) as server:
        yield server.url, seen


def _gateway(url: str) -> GatewayServer:
    fleet = parse_fleet(
        {
            "hosts": [{"name": "h", "base_url": url}],
            "models": {"coder": {"upstream": "host/model-q4"}},
        }
    )
    return GatewayServer(fleet, require_keys=False)


@pytest.mark.integration
def test_request_and_reply_cross_the_gateway_with_only_the_model_changed(
    host: tuple[str, list[bytes]],
) -> None:
    url, seen = host
    sent = b'{"model" : "coder",  "messages": [{"role": "user", "content": "caf\xc3\xa9"}]}'
    with _gateway(url) as gw:
        r = httpx.post(
            gw.base_url + "/chat/completions",
            content=sent,
            headers={"content-type": "application/json"},
        )
    assert r.status_code == 200
    assert seen == [sent.replace(b'"model" : "coder"', b'"model":"host/model-q4"')]
    assert r.content == REPLY.replace(b'"model": "host/model-q4"', b'"model":"coder"')


@pytest.mark.integration
def test_a_body_with_a_nested_model_is_serialised_and_still_right(
    host: tuple[str, list[bytes]],
) -> None:
    url, seen = host
    body = {"model": "coder", "metadata": {"model": "coder"}, "messages": []}
    with _gateway(url) as gw:
        r = httpx.post(gw.base_url + "/chat/completions", json=body)
    assert r.status_code == 200
    assert json.loads(seen[0]) == {**body, "model": "host/model-q4"}
    assert r.json()["model"] == "coder"
