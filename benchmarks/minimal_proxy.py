"""The gateway benchmark's anchor: the least a starlette + httpx proxy can do.

It forwards ``POST /v1/chat/completions`` to one upstream as it is (non-streamed: one
JSON reply; streamed: the raw bytes), with no keys, routing, usage or telemetry. Served by
uvicorn with the gateway's settings, so that the difference is the gateway's own work.

A streamed reply starts (status and headers) as soon as the upstream's headers are in.
With ``--hold-first-event`` it starts only once the upstream's first whole event is in,
as the gateway does (a host that fails before its first event can still be retried and
the client still gets a real HTTP status): the anchor with the gateway's semantics and
none of its work.

    python benchmarks/minimal_proxy.py --port 8080 --upstream http://127.0.0.1:1234 \
        [--hold-first-event]
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import AsyncIterator

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route


def make_app(upstream: str, hold_first_event: bool = False) -> Starlette:
    client = httpx.AsyncClient(
        timeout=60, limits=httpx.Limits(max_connections=1000, max_keepalive_connections=200)
    )

    async def chat(request: Request) -> Response:
        body = await request.body()
        headers = {"content-type": "application/json"}
        url = upstream + "/v1/chat/completions"
        for attempt in (1, 2, 3):  # a pooled connection the host had closed: sent again,
            req = client.build_request("POST", url, content=body, headers=headers)
            try:  # as the gateway does (llama.cpp's server ends some after a stream)
                resp = await client.send(req, stream=True)
                break
            except httpx.RemoteProtocolError:
                if attempt == 3:
                    raise
        if b'"stream":true' not in body.replace(b" ", b""):
            content = await resp.aread()
            await resp.aclose()
            return Response(content, resp.status_code, media_type="application/json")

        raw = resp.aiter_raw()
        head = b""
        if hold_first_event:  # read up to the end of the first event before answering
            async for chunk in raw:
                head += chunk
                if b"\n\n" in head or b"\r\n\r\n" in head:
                    break

        async def relay() -> AsyncIterator[bytes]:
            try:
                if head:
                    yield head
                async for chunk in raw:
                    yield chunk
            finally:
                await resp.aclose()

        return StreamingResponse(relay(), resp.status_code, media_type="text/event-stream")

    async def health(request: Request) -> Response:
        return JSONResponse({"ok": True})

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await client.aclose()

    routes = [Route("/v1/chat/completions", chat, methods=["POST"]), Route("/health", health)]
    return Starlette(routes=routes, lifespan=lifespan)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--upstream", required=True)
    p.add_argument(
        "--hold-first-event",
        action="store_true",
        help="start a streamed reply only once the upstream's first event is in",
    )
    a = p.parse_args()
    app = make_app(a.upstream.rstrip("/"), a.hold_first_event)
    uvicorn.run(app, host="127.0.0.1", port=a.port, log_level="warning")


if __name__ == "__main__":
    main()
