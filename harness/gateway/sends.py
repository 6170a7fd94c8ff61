"""Fewer sends per call: what the gateway writes in one go leaves in one send.

On a loopback or a VM's virtual network a send that wakes the reader costs far more than
the bytes in it, and a proxy that writes a reply's head and body (or a request's head and
body) apart wakes the other side twice per call. Both of the gateway's sides join them:

- towards the client, ``coalescing(protocol_class)``: uvicorn's HTTP protocol over a
  transport whose writes within one turn of the event loop leave as one send at the end of
  that turn (a reply's status line, headers and body; a stream's first events);
- towards a host, ``coalesce_requests(client)``: httpx's connections to hosts hold what is
  written to them until the reply is read (a request's head and body leave together). A
  write that fails is dropped as httpcore drops it (the reply, or the connection's end, is
  read all the same), so a connection the host had closed fails as it did before.

Nothing is delayed past the turn that wrote it, and no byte changes.
"""

from __future__ import annotations

import asyncio
import contextlib
import select
import socket
import ssl
from typing import Any

import httpcore
import httpx


class CoalescingTransport:
    """An asyncio transport whose writes in one turn of the loop go out as one send."""

    def __init__(self, transport: asyncio.Transport) -> None:
        self._transport = transport
        self._pending: list[bytes] = []
        self._loop = asyncio.get_running_loop()

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not data:
            return
        if not self._pending:
            self._loop.call_soon(self.flush)
        self._pending.append(bytes(data))

    def writelines(self, lines: Any) -> None:
        for data in lines:
            self.write(data)

    def flush(self) -> None:
        """Send what was written (a no-op if nothing was, or the transport is closing)."""
        if not self._pending:
            return
        data = self._pending[0] if len(self._pending) == 1 else b"".join(self._pending)
        self._pending = []
        if not self._transport.is_closing():
            self._transport.write(data)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def write_eof(self) -> None:
        self.flush()
        self._transport.write_eof()

    def abort(self) -> None:
        self._pending = []
        self._transport.abort()

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size() + sum(map(len, self._pending))

    def __getattr__(self, name: str) -> Any:  # everything else: the transport's own
        return getattr(self._transport, name)


def coalescing(protocol_class: type[asyncio.Protocol]) -> type[asyncio.Protocol]:
    """``protocol_class`` (uvicorn's HTTP protocol) writing through a ``CoalescingTransport``."""

    class Coalescing(protocol_class):  # type: ignore[valid-type,misc]
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(CoalescingTransport(transport))  # type: ignore[arg-type]

    Coalescing.__name__ = Coalescing.__qualname__ = f"Coalescing{protocol_class.__name__}"
    return Coalescing


def server_protocol() -> type[asyncio.Protocol]:
    """The HTTP protocol uvicorn would pick by itself (httptools if installed, else h11),
    coalescing its writes: what the gateway's servers pass as uvicorn's ``http``."""
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    return coalescing(AutoHTTPProtocol)


def readable(sock: socket.socket) -> bool:
    """Whether a read on ``sock`` would not wait: on an idle connection, that the host has
    closed it (or sent what it should not have). A socket already closed counts."""
    fd = sock.fileno()
    if fd < 0:
        return True
    poll = select.poll()
    poll.register(fd, select.POLLIN)
    return bool(poll.poll(0))


class HeldWritesStream(httpcore.AsyncNetworkStream):
    """A connection to a host whose writes wait for the next read (or TLS start)."""

    def __init__(self, stream: httpcore.AsyncNetworkStream) -> None:
        self._stream = stream
        self._pending: list[bytes] = []
        self._timeout: float | None = None
        sock = stream.get_extra_info("socket")
        plain = stream.get_extra_info("ssl_object") is None and hasattr(select, "poll")
        self._sock = sock if plain and isinstance(sock, socket.socket) else None

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if buffer:
            self._pending.append(buffer)
            self._timeout = timeout

    async def _flush(self) -> None:
        if not self._pending:
            return
        data = self._pending[0] if len(self._pending) == 1 else b"".join(self._pending)
        self._pending = []
        # httpcore reads the reply after a failed write (a host may answer and close):
        # so does this, and the read says how the connection ended
        with contextlib.suppress(httpcore.WriteError):
            await self._stream.write(data, self._timeout)

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        await self._flush()
        return await self._stream.read(max_bytes, timeout)

    async def aclose(self) -> None:
        self._pending = []
        await self._stream.aclose()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        await self._flush()
        return HeldWritesStream(await self._stream.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable" and self._sock is not None:  # the pool asks per request
            return readable(self._sock)
        return self._stream.get_extra_info(info)


class HeldWritesBackend(httpcore.AsyncNetworkBackend):
    def __init__(self, backend: httpcore.AsyncNetworkBackend) -> None:
        self._backend = backend

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore.AsyncNetworkStream:
        stream = await self._backend.connect_tcp(host, port, timeout, local_address, socket_options)
        return HeldWritesStream(stream)

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Any = None
    ) -> httpcore.AsyncNetworkStream:
        return HeldWritesStream(
            await self._backend.connect_unix_socket(path, timeout, socket_options)
        )

    async def sleep(self, seconds: float) -> None:
        await self._backend.sleep(seconds)


def coalesce_requests(client: httpx.AsyncClient) -> bool:
    """Make ``client``'s direct connections (not proxied ones) hold writes until the reply
    is read; False if this httpx keeps its pool elsewhere (then nothing changes)."""
    pool = getattr(getattr(client, "_transport", None), "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if not isinstance(pool, httpcore.AsyncConnectionPool) or backend is None:
        return False
    if not isinstance(backend, HeldWritesBackend):
        pool._network_backend = HeldWritesBackend(backend)
    return True
