"""The stream relay: upstream SSE events to the client, one relay with one teardown.

Two framings share it: chat/text completions (chunks re-labelled with the model the client
asked for, usage dropped unless asked for, ``[DONE]`` sent after the telemetry line is
written) and /v1/responses (events forwarded as they are; the last one is held until the
line is written). However the relay ends (finished, upstream broke, client gone), the
attempt is finished exactly once and the upstream response closed.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx
from starlette.responses import StreamingResponse

from harness.fleet import wire
from harness.gateway.accounting import STREAM_BROKEN, Accounting
from harness.gateway.calls import Attempt, Call, Opened, snippet
from harness.gateway.host_times import engine_timings
from harness.gateway.messages import from_usage


def client_chunk(call: Call, chunk: dict[str, Any]) -> dict[str, Any] | None:
    """An upstream chunk as the client should see it (None: not for this client)."""
    if call.requested:
        chunk["model"] = call.requested
    if chunk.get("usage") and not call.include_usage:
        if not chunk.get("choices"):
            return None
        chunk = {k: v for k, v in chunk.items() if k != "usage"}
    return chunk


def take_chunk(att: Attempt, acc: wire.ChunkAccumulator, data: str) -> dict[str, Any] | None:
    """Account for one upstream chat/text event; None for ``[DONE]``."""
    if data.strip() == "[DONE]":
        att.done = True
        return None
    chunk = json.loads(data)
    if chunk.get("error"):
        raise httpx.RemoteProtocolError(f"upstream error event: {snippet(data)}")
    att.mark_chunk(wire.has_output(chunk))
    acc.add(chunk)
    if chunk.get("usage"):
        att.usage = chunk["usage"]
    if "timings" in chunk:
        att.timings = engine_timings(chunk) or att.timings
    return dict(chunk)


async def finish_body(opened: Opened) -> None:
    """Read what follows ``[DONE]`` (the end of the chunked body), so that the upstream
    connection goes back to the pool instead of being closed: a new TCP connection per
    call costs more than the rest of the gateway's work."""
    if opened.lines is None:
        return
    with contextlib.suppress(httpx.HTTPError, StopAsyncIteration):
        async for _ in opened.lines:
            pass


async def close_response(resp: httpx.Response | None) -> None:
    if resp is not None:
        with contextlib.suppress(BaseException):
            await resp.aclose()


class ChatFraming:
    """Chat and text completions: chunks already taken in are only re-labelled."""

    hold_last = False

    def __init__(self, call: Call, opened: Opened, accounting: Accounting) -> None:
        self.call, self.opened, self.accounting = call, opened, accounting

    def early(self, ev: tuple[str | None, str]) -> bytes | None:
        if ev[1].strip() == "[DONE]":
            return None
        taken, self.opened.taken = self.opened.taken, None
        out = client_chunk(self.call, taken if taken is not None else json.loads(ev[1]))
        return wire.sse_bytes(out) if out is not None else None

    def event(self, ev: tuple[str | None, str]) -> bytes | None:
        chunk = take_chunk(self.opened.attempt, self.opened.acc, ev[1])
        out = client_chunk(self.call, chunk) if chunk is not None else None
        return wire.sse_bytes(out) if out is not None else None

    @property
    def done(self) -> bool:
        return self.opened.attempt.done

    async def complete(self) -> None:
        if not self.opened.attempt.done and not self.opened.acc.finished():
            raise httpx.RemoteProtocolError("upstream stream ended without finishing")
        await finish_body(self.opened)

    def record(self) -> None:
        self.accounting.record_reply(self.call, self.opened.acc, None)

    def trailer(self) -> bytes | None:
        return wire.DONE

    def broken(self, host: str, sent: int) -> bytes:
        return wire.sse_bytes(
            {
                "error": {
                    "message": f"harness gateway: upstream host {host} broke the "
                    f"stream after {sent} chunk(s); the reply is incomplete. Retry the "
                    "request.",
                    "type": "upstream_incomplete",
                    "code": "upstream_incomplete",
                }
            }
        )


def messages_usage(obj: dict[str, Any], seen: dict[str, Any], att: Attempt) -> None:
    """Usage from a Messages stream: message_start's, updated by each message_delta."""
    typ = obj.get("type")
    if typ == "message_start" and isinstance(obj.get("message"), dict):
        seen.update(obj["message"].get("usage") or {})
    elif typ == "message_delta" and isinstance(obj.get("usage"), dict):
        seen.update({k: v for k, v in obj["usage"].items() if v is not None})
    else:
        return
    att.usage = from_usage(seen)


class EventFraming:
    """/v1/responses (and passed-through /v1/messages) streams: events forwarded as they
    are; usage from the last one (Messages: message_start and message_delta)."""

    hold_last = True
    done = False

    def __init__(self, call: Call, opened: Opened, accounting: Accounting) -> None:
        self.call, self.opened, self.accounting = call, opened, accounting
        self.events: list[list[Any]] = []
        self.anthropic_usage: dict[str, Any] = {}  # a passed-through Messages stream's

    def event(self, ev: tuple[str | None, str]) -> bytes:
        name, data = ev
        att = self.opened.attempt
        with contextlib.suppress(ValueError):
            obj = json.loads(data)
            if isinstance(obj, dict):
                typ = str(obj.get("type", name or ""))
                att.mark_chunk("delta" in typ)
                resp = obj.get("response")
                if isinstance(resp, dict) and resp.get("usage"):
                    att.usage = resp["usage"]
                messages_usage(obj, self.anthropic_usage, att)
                self.events.append([name, obj])
        return wire.sse_bytes(data, name)

    early = event

    async def complete(self) -> None:
        return None

    def record(self) -> None:
        a = self.opened.attempt
        meta = {"host": a.host, "upstream": a.upstream, "stream": self.call.stream}
        self.accounting.record(self.call, {"events": self.events}, meta)

    def trailer(self) -> bytes | None:
        return None

    def broken(self, host: str, sent: int) -> bytes:
        return wire.sse_bytes(
            {
                "type": "error",
                "error": {
                    "message": f"harness gateway: upstream host {host} broke the stream; "
                    "the reply is incomplete",
                    "type": "upstream_incomplete",
                },
            },
            "error",
        )


Framing = ChatFraming | EventFraming


async def relay(opened: Opened, framing: Framing, accounting: Accounting) -> AsyncIterator[bytes]:
    """Upstream events to the client; the attempt's line is written before the last byte
    leaves, so a client that has its reply finds its telemetry already there."""
    att = opened.attempt
    sent = 0
    held: bytes | None = None

    def out(data: bytes | None) -> bytes | None:
        """What to send now: with ``hold_last`` the previous event, this one waits."""
        nonlocal held
        if data is None:
            return None
        if not framing.hold_last:
            return data
        prev, held = held, data
        return prev

    try:
        for first in opened.events:  # already read (and, for chat, taken in) while opening
            data = out(framing.early(first))
            if data is not None:
                yield data
                sent += 1
        assert opened.lines is not None
        while not framing.done:
            try:
                ev = opened.decoder.feed(await anext(opened.lines))
            except StopAsyncIteration:
                ev = opened.decoder.flush()
                if ev is None:
                    break
            if ev is None:
                continue
            data = out(framing.event(ev))
            if data is not None:
                yield data
                sent += 1
        await framing.complete()
        att.status = 200
        accounting.finish(att)
        framing.record()
        for data in (held, framing.trailer()):
            if data is not None:
                yield data
    except (httpx.HTTPError, ValueError) as exc:
        att.status, att.incomplete = STREAM_BROKEN, True
        att.error = (
            f"stream broke after {sent} chunk(s) reached the client: {type(exc).__name__}: {exc}"
        )
        accounting.finish(att, failed=True)
        if held is not None:
            yield held
        yield framing.broken(att.host, sent)
    except BaseException:  # client went away (cancelled) or worse
        att.status, att.incomplete = att.status or 200, True
        att.error = att.error or "client disconnected before the stream ended"
        raise
    finally:
        accounting.finish(att)
        await close_response(opened.response)


class RelayResponse(StreamingResponse):
    """An SSE reply that runs ``on_close`` however it ends (even if never iterated)."""

    def __init__(
        self, content: AsyncIterator[bytes], on_close: Callable[[], Awaitable[None]]
    ) -> None:
        super().__init__(
            content, media_type="text/event-stream", headers={"Cache-Control": "no-cache"}
        )
        self._on_close = on_close

    def also_on_close(self, done: Callable[[], None]) -> None:
        """Run ``done`` too once the reply has ended (after what runs already)."""
        before = self._on_close

        async def both() -> None:
            try:
                await before()
            finally:
                done()

        self._on_close = both

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            with contextlib.suppress(Exception):  # runs the relay's own finally, if it began
                await self.body_iterator.aclose()  # type: ignore[attr-defined]
            await self._on_close()


def stream_reply(opened: Opened, framing: Framing, accounting: Accounting) -> RelayResponse:
    async def abandon() -> None:
        """If the relay never ran to its end (the client left before the first byte), still
        free the host, write the line and close upstream."""
        att = opened.attempt
        if att.token is not None:
            att.status, att.incomplete = att.status or 200, True
            att.error = att.error or "client disconnected before the stream began"
            accounting.finish(att)
        await close_response(opened.response)

    return RelayResponse(relay(opened, framing, accounting), abandon)


__all__ = ["STREAM_BROKEN", "ChatFraming", "EventFraming", "relay", "stream_reply", "take_chunk"]
