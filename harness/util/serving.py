"""Run an ASGI app under uvicorn in a background thread, on a socket we bind ourselves
(so port 0 works and the bound port is known before the first request)."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import uvicorn

# Keep idle connections open longer than any client does (httpx, and the openai client on
# it, drop theirs after 5 s; uvicorn's own default is also 5 s): with equal timeouts a
# client may send on a connection the server is closing that instant, and sees
# httpx.ReadError / "Server disconnected" while waiting for headers. The server must
# never be the side that closes an idle kept-alive connection first.
KEEP_ALIVE_S = 75


def bind_socket(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto must say TCP: asyncio only turns Nagle off (TCP_NODELAY) on sockets that do,
    # and without it every kept-alive response waits ~40 ms for a delayed ACK
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    sock.setblocking(False)
    return sock


class ThreadedServer:
    """Runs an ASGI app under uvicorn in a background thread on a socket bound by us."""

    def __init__(
        self,
        app: Any,
        host: str = "127.0.0.1",
        port: int = 0,
        log_level: str = "warning",
        http: Any = "auto",
    ) -> None:
        self.app = app
        self.http = http  # uvicorn's HTTP protocol: a name, or a protocol class
        self.host = host
        self.port = port
        self.log_level = log_level
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self, timeout: float = 10.0) -> ThreadedServer:
        sock = bind_socket(self.host, self.port)
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self.app,
            log_level=self.log_level,
            lifespan="auto",
            timeout_graceful_shutdown=1,
            timeout_keep_alive=KEEP_ALIVE_S,
            http=self.http,
        )
        server = uvicorn.Server(config)
        server.install_signal_handlers = lambda: None  # type: ignore[attr-defined]
        self._server = server
        self._thread = threading.Thread(
            target=server.run, kwargs={"sockets": [sock]}, daemon=True, name=f"uvicorn:{self.port}"
        )
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"server on {self.url} did not start")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._server = self._thread = None

    def __enter__(self) -> ThreadedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
