"""A streamed reply whose host is found while the client is already being served.

The gateway sends a stream's status only once the host's first event is in: a host that
fails before it is retried on another unseen, and a call no host could answer gets the
real error status and body. ``PendingReply`` is handed to Starlette at once and opens the
upstream (with its retries) inside its own ASGI call, after the watch for the client's
disconnect is running: what a streamed reply sets up (a task group, the listener, its
headers) is done while the host prefills, and what is left once the first event is in is
the status and that event, sent together. Nothing reaches the client before then.

A client that leaves before the first event cancels the opening: the attempt's line is
written (``client_gone``), its host freed and the upstream request closed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from starlette.responses import Response

from harness.gateway.calls import Call
from harness.gateway.relay import RelayResponse

Settle = Callable[[Response], Response]


class PendingReply(Response):
    """A streamed call's reply, opened when it is served (or by ``open()``)."""

    def __init__(self, call: Call, opening: Callable[[], Awaitable[Response]]) -> None:
        super().__init__(media_type="text/event-stream")
        self.call = call
        self._opening = opening
        self._settle: list[Settle] = []
        self._failed: list[Callable[[], None]] = []

    def then(self, settle: Settle, failed: Callable[[], None]) -> None:
        """Once opened, pass the reply through ``settle``; if opening raises (the client
        gone, a bug), run ``failed`` instead."""
        self._settle.append(settle)
        self._failed.append(failed)

    async def open(self) -> Response:
        """The reply as the upstream opened it: a relay, or an error response."""
        try:
            reply = await self._opening()
        except BaseException:
            for failed in self._failed:
                failed()
            raise
        for settle in self._settle:
            reply = settle(reply)
        return reply

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        reply: Response | None = None
        try:
            async with anyio.create_task_group() as group:

                async def watch() -> None:
                    while (await receive())["type"] != "http.disconnect":
                        pass
                    if reply is None:
                        self.call.client_gone = True
                    group.cancel_scope.cancel()

                group.start_soon(watch)
                reply = await self.open()
                if isinstance(reply, RelayResponse):
                    await reply.stream_response(send)
                else:
                    await reply(scope, receive, send)
                group.cancel_scope.cancel()
        finally:
            if isinstance(reply, RelayResponse):
                await reply.end()


async def opened(resp: Response) -> Response:
    """``resp`` with its status known: a pending reply opened now (for a front that
    translates replies by their status, the Messages one)."""
    return await resp.open() if isinstance(resp, PendingReply) else resp
