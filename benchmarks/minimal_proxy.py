"""The gateway benchmark's anchor: the least a starlette + httpx proxy can do.

It forwards ``POST /v1/chat/completions`` to one upstream as it is (non-streamed: one
JSON reply; streamed: the raw bytes), with no keys, routing, usage or telemetry. Served by
uvicorn with the gateway's settings, so that the difference is the gateway's own work.

    python benchmarks/minimal_proxy.py --port 8080 --upstream http://127.0.0.1:1234
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


def make_app(upstream: str) -> Starlette:
    client = httpx.AsyncClient(
        timeout=60, limits=httpx.Limits(max_connections=1000, max_keepalive_connections=200)
    )

    async def chat(request: Request) -> Response:
        body = await request.body()
        headers = {"content-type": "application/json"}
        url = upstream + "/v1/chat/completions"
        req = client.build_request("POST", url, content=body, headers=headers)
        resp = await client.send(req, stream=True)
        if b'"stream":true' not in body.replace(b" ", b""):
            content = await resp.aread()
            await resp.aclose()
            return Response(content, resp.status_code, media_type="application/json")

        async def relay() -> AsyncIterator[bytes]:
            try:
                async for chunk in resp.aiter_raw():
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
    a = p.parse_args()
    uvicorn.run(
        make_app(a.upstream.rstrip("/")), host="127.0.0.1", port=a.port, log_level="warning"
    )


if __name__ == "__main__":
    main()
