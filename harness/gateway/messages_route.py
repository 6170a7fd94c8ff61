"""The Anthropic Messages front: ``POST /v1/messages`` and ``/v1/messages/count_tokens``.

A Messages call is translated to chat completions (``messages.to_chat``) and then goes
down exactly the path an OpenAI call takes (``Gateway.begin_call`` and ``answer_call``):
the same key lookup (``x-api-key`` or Bearer), model mapping (``agent_aliases`` first, so
the model names an agent hard-codes reach the entrant's model), budget, routing, retries,
telemetry, cost and cassettes (recorded and replayed as chat traffic). The reply is
translated back. When every host that serves the model speaks Messages itself
(``messages: true`` in the fleet file), the call is passed through to them unchanged.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any, Protocol

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from harness.fleet import wire
from harness.fleet.config import FleetConfig
from harness.gateway.calls import CHAT, Call, KeyInfo, prompt_estimate
from harness.gateway.messages import (
    COUNT_TOKENS,
    MESSAGES,
    StreamTranslator,
    error_body,
    to_chat,
    to_message,
)
from harness.gateway.relay import RelayResponse


class Configured(Protocol):
    """The part of the gateway's configuration this route reads."""

    @property
    def fleet(self) -> FleetConfig: ...


class Gateway(Protocol):
    """What this route needs of the gateway (``app.Gateway``, which mounts it)."""

    @property
    def config(self) -> Configured: ...

    def authenticate(self, request: Request) -> KeyInfo | None: ...

    def begin_call(self, key: KeyInfo, body: dict[str, Any], endpoint: str) -> Call | Response: ...

    async def answer_call(self, call: Call) -> Response: ...


def anthropic_error(status: int, message: str, kind: str | None = None) -> JSONResponse:
    body = error_body(status, {"error": {"message": message, "code": kind or ""}})
    return JSONResponse(body, status_code=status)


def _as_anthropic(resp: Response) -> Response:
    """A gateway error reply (OpenAI shape) in Messages shape, same status and
    ``Retry-After``/``x-should-retry`` headers."""
    try:
        body = json.loads(bytes(resp.body))
    except (ValueError, AttributeError):
        body = {"error": {"message": "gateway error"}}
    headers = {
        k: v for k, v in resp.headers.items() if k.lower() in ("retry-after", "x-should-retry")
    }
    return JSONResponse(error_body(resp.status_code, body), resp.status_code, headers=headers)


async def _read_body(request: Request) -> dict[str, Any] | Response:
    try:
        body = await request.json()
    except ValueError:
        return anthropic_error(400, "request body is not valid JSON")
    if not isinstance(body, dict):
        return anthropic_error(400, "request body must be a JSON object")
    return body


def _passes_through(gw: Gateway, call: Call) -> bool:
    """Every host that may serve this call speaks Messages itself."""
    hosts = {h.name: h for h in gw.config.fleet.hosts}
    names = call.candidates
    return bool(names) and all(getattr(hosts.get(n), "messages", False) for n in names)


async def _translated_stream(source: AsyncIterable[Any], model: str) -> AsyncIterator[bytes]:
    """Chat completion SSE bytes in, Messages SSE bytes out."""
    tr = StreamTranslator(model)
    decoder = wire.SSEDecoder()
    finished = False
    buffer = ""

    def events(data: str) -> list[tuple[str, dict[str, Any]]]:
        nonlocal finished
        if data.strip() == "[DONE]":
            finished = True
            return tr.finish()
        chunk = json.loads(data)
        if isinstance(chunk, dict) and chunk.get("error"):
            err = chunk["error"]
            finished = True
            message = err.get("message", str(err)) if isinstance(err, dict) else str(err)
            return [tr.error(message)]
        return tr.feed(chunk)

    async for piece in source:
        buffer += piece.decode("utf-8") if isinstance(piece, bytes) else str(piece)
        *lines, buffer = buffer.split("\n")
        for line in lines:
            ev = decoder.feed(line)
            if ev is None or finished:
                continue
            for name, data in events(ev[1]):
                yield wire.sse_bytes(data, name)
    for line in [*buffer.split("\n"), ""]:
        ev = decoder.feed(line)
        if ev is not None and not finished:
            for name, data in events(ev[1]):
                yield wire.sse_bytes(data, name)
    if not finished:  # the upstream ended without [DONE]: say so, as Anthropic would
        name, data = tr.error("harness gateway: the upstream stream ended early")
        yield wire.sse_bytes(data, name)


def _translate_reply(resp: Response, requested: str) -> Response:
    if isinstance(resp, StreamingResponse):
        inner = resp.body_iterator
        on_close = getattr(resp, "_on_close", None)

        async def close() -> None:
            """The relay's teardown: its generator's ``finally``, then its own close."""
            with contextlib.suppress(Exception):
                await inner.aclose()  # type: ignore[attr-defined]
            if on_close is not None:
                await on_close()

        return RelayResponse(_translated_stream(inner, requested), close)
    if resp.status_code != 200:
        return _as_anthropic(resp)
    return JSONResponse(to_message(json.loads(bytes(resp.body)), requested))


def messages_routes(gw: Gateway) -> list[Route]:
    async def messages(request: Request) -> Response:
        key = gw.authenticate(request)
        if key is None:
            return anthropic_error(401, "unknown API key: use the key the harness gave this trial")
        body = await _read_body(request)
        if isinstance(body, Response):
            return body
        requested = str(body.get("model") or "")
        chat = to_chat(body)
        call = gw.begin_call(key, chat, CHAT)
        if isinstance(call, Response):
            return _as_anthropic(call)
        if _passes_through(gw, call):
            call.endpoint, call.body = MESSAGES, body
            resp = await gw.answer_call(call)
            return resp if resp.status_code < 400 else _as_anthropic(resp)
        resp = await gw.answer_call(call)
        if resp.status_code != 200:
            return _as_anthropic(resp)
        return _translate_reply(resp, requested or call.model)

    async def count_tokens(request: Request) -> Response:
        if gw.authenticate(request) is None:
            return anthropic_error(401, "unknown API key")
        body = await _read_body(request)
        if isinstance(body, Response):
            return body
        return JSONResponse({"input_tokens": prompt_estimate(to_chat(body))})

    return [
        Route(MESSAGES, messages, methods=["POST"]),
        Route(COUNT_TOKENS, count_tokens, methods=["POST"]),
    ]
