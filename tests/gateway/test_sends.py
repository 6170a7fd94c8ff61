"""What the gateway writes in one go leaves in one send: a reply's head and body towards
the client, a request's head and body towards a host; no byte changes, nothing waits
past the turn of the event loop that wrote it."""

from __future__ import annotations

import asyncio
from typing import Any

import httpcore
import httpx
import pytest

from harness.gateway.sends import (
    CoalescingTransport,
    HeldWritesBackend,
    HeldWritesStream,
    coalesce_requests,
)

pytestmark = pytest.mark.unit


class FakeTransport:
    def __init__(self) -> None:
        self.sent: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        self.sent.append(data)

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def get_write_buffer_size(self) -> int:
        return 0

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("127.0.0.1", 1) if name == "peername" else default


def test_writes_in_one_turn_leave_as_one_send_at_its_end() -> None:
    async def main() -> FakeTransport:
        raw = FakeTransport()
        t = CoalescingTransport(raw)  # type: ignore[arg-type]
        t.write(b"HTTP/1.1 200 OK\r\n\r\n")
        t.write(b"")
        t.write(memoryview(b"body"))
        assert raw.sent == []  # not before the turn ends
        assert t.get_write_buffer_size() == 23
        assert t.get_extra_info("peername") == ("127.0.0.1", 1)  # the rest is the transport's
        await asyncio.sleep(0)
        assert raw.sent == [b"HTTP/1.1 200 OK\r\n\r\nbody"]
        t.write(b"next")
        t.close()  # closing sends what is pending first
        assert raw.sent[-1] == b"next" and raw.closed
        return raw

    asyncio.run(main())


class FakeStream(httpcore.AsyncNetworkStream):
    def __init__(self, fail: bool = False) -> None:
        self.log: list[tuple[str, bytes]] = []
        self.fail = fail

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.log.append(("write", buffer))
        if self.fail:
            raise httpcore.WriteError("broken pipe")

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        self.log.append(("read", b""))
        return b""

    async def aclose(self) -> None:
        self.log.append(("close", b""))

    def get_extra_info(self, info: str) -> Any:
        return None


def test_a_request_leaves_in_one_write_when_its_reply_is_read() -> None:
    inner = FakeStream()
    stream = HeldWritesStream(inner)

    async def main() -> None:
        await stream.write(b"POST / HTTP/1.1\r\n\r\n")
        await stream.write(b'{"a":1}')
        assert inner.log == []
        await stream.read(100)

    asyncio.run(main())
    assert inner.log == [("write", b'POST / HTTP/1.1\r\n\r\n{"a":1}'), ("read", b"")]


def test_a_failed_write_is_dropped_and_the_read_says_how_the_connection_ended() -> None:
    inner = FakeStream(fail=True)
    stream = HeldWritesStream(inner)

    async def main() -> bytes:
        await stream.write(b"request")
        return await stream.read(100)  # httpcore reads the reply after a failed write too

    assert asyncio.run(main()) == b""
    assert [op for op, _ in inner.log] == ["write", "read"]


def test_an_httpx_client_holds_its_writes_until_the_reply() -> None:
    """Against the installed httpx: if it moves its pool, this says so (nothing breaks)."""

    async def main() -> None:
        async with httpx.AsyncClient() as client:
            assert coalesce_requests(client)
            assert coalesce_requests(client)  # twice: wrapped once
            pool = client._transport._pool  # type: ignore[attr-defined]
            backend = pool._network_backend
            assert isinstance(backend, HeldWritesBackend)
            assert not isinstance(backend._backend, HeldWritesBackend)

    asyncio.run(main())


def test_an_idle_connection_the_host_closed_reads_as_readable() -> None:
    """What the pool asks of every idle connection before it reuses one."""
    import socket

    from harness.gateway.sends import readable

    a, b = socket.socketpair()
    try:
        assert not readable(a)
        b.close()
        assert readable(a)
    finally:
        a.close()
    assert readable(a)  # closed: a read would not wait


@pytest.mark.integration
def test_the_gateways_reply_reaches_the_client_in_one_segment() -> None:
    """Head and body written apart reach a client already waiting as two reads."""
    import socket

    from harness.fleet.config import parse_fleet
    from harness.gateway import GatewayServer

    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        nobody = free.getsockname()[1]  # a host that refuses: /health still answers
    fleet = parse_fleet(
        {
            "hosts": [{"name": "h", "base_url": f"http://127.0.0.1:{nobody}"}],
            "models": {"m": {"upstream": "m"}},
        }
    )
    with GatewayServer(fleet, require_keys=False) as gw:
        for _ in range(3):
            with socket.create_connection(("127.0.0.1", gw.port)) as conn:
                conn.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                first = conn.recv(65536)  # blocks until the first segment is in
                head, _, body = first.partition(b"\r\n\r\n")
                assert head.startswith(b"HTTP/1.1 200")
                length = next(
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length")
                )
                assert length > 0 and len(body) == length
