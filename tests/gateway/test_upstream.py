"""A host that closes a connection without answering on it (llama.cpp's server does, now
and then, after a streamed reply, unannounced) is not a failing host: the gateway sends
the request again on a new connection, and the call is one attempt, answered."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator

import httpx
import pytest

from harness.fleet.config import parse_fleet
from harness.gateway import GatewayServer

pytestmark = pytest.mark.integration
REPLY = {
    "id": "x",
    "object": "chat.completion",
    "model": "m",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}}],
    "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
}


def _host(drop_first: int) -> Iterator[tuple[str, list[str]]]:
    """A raw HTTP host: the first ``drop_first`` requests get their connection closed
    unanswered; the others a JSON reply (``/v1/models`` always answers)."""
    server = socket.create_server(("127.0.0.1", 0))
    seen: list[str] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                head, _, rest = data.partition(b"\r\n\r\n")
                length = next(
                    (int(h.split(b":")[1]) for h in head.split(b"\r\n")
                     if h.lower().startswith(b"content-length")),
                    0,
                )  # fmt: skip
                while len(rest) < length:
                    rest += conn.recv(65536)
                path = head.split(b" ")[1].decode()
                seen.append(path)
                posts = [p for p in seen if p.endswith("/chat/completions")]
                if path.endswith("/chat/completions") and len(posts) <= drop_first:
                    continue  # closed without a response
                body = json.dumps(REPLY if "chat" in path else {"data": [{"id": "m"}]}).encode()
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    b"Connection: close\r\nContent-Length: " + str(len(body)).encode()
                    + b"\r\n\r\n" + body
                )  # fmt: skip

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}", seen
    finally:
        server.close()


@pytest.mark.parametrize(("drops", "status"), [(2, 200), (3, "connect_error")])
def test_a_connection_closed_unanswered_is_sent_again(drops: int, status: object) -> None:
    for url, seen in _host(drops):
        fleet = parse_fleet(
            {
                "hosts": [{"name": "h", "base_url": url}],
                "models": {"m": {"upstream": "m"}},
                "routing": {"max_attempts": 1, "max_wait_s": 0},
            }
        )
        with GatewayServer(fleet) as gw:
            key = gw.issue_key("t")
            r = httpx.post(
                f"{gw.base_url}/chat/completions",
                json={"model": "m", "messages": [{"role": "user", "content": "hi"}]},
                headers={"Authorization": f"Bearer {key}"},
                timeout=30,
            )
            rows = gw.telemetry()
        assert [row["status"] for row in rows] == [status]
        assert len([p for p in seen if p.endswith("/chat/completions")]) == 3
        if status == 200:
            assert r.status_code == 200 and rows[0]["completion_tokens"] == 1
        else:  # three closed in a row: the host is failing, as before
            assert r.status_code >= 500
