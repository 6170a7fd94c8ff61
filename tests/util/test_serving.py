"""Harness's servers keep an idle kept-alive connection open longer than clients do
(httpx drops its own after 5 s): the server never closes one under a client that is just
sending on it (that race showed as httpx.ReadError while waiting for headers)."""

from __future__ import annotations

import socket
import time

import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from harness.util.serving import KEEP_ALIVE_S, ThreadedServer

pytestmark = pytest.mark.unit

REQUEST = b"GET /ping HTTP/1.1\r\nHost: x\r\n\r\n"


def _answer(sock: socket.socket) -> bytes:
    data = b""
    while b"pong" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            return data  # the server closed the connection
        data += chunk
    return data


def test_an_idle_connection_outlives_the_clients_keepalive() -> None:
    assert KEEP_ALIVE_S > 5
    app = Starlette(routes=[Route("/ping", lambda r: PlainTextResponse("pong"))])
    with ThreadedServer(app) as srv, socket.create_connection((srv.host, srv.port)) as sock:
        sock.sendall(REQUEST)
        assert _answer(sock).startswith(b"HTTP/1.1 200")
        time.sleep(5.5)  # past uvicorn's default keep-alive (5 s), idle
        sock.sendall(REQUEST)
        assert _answer(sock).startswith(b"HTTP/1.1 200")
