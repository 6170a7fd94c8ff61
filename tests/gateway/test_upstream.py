"""A host that closes a connection without answering on it (llama.cpp's server does, now
and then, after a streamed reply, unannounced) is not a failing host: the gateway sends
the request again on a new connection, and the call is one attempt, answered.

A streamed reply: the client sees no status and no byte before the host's first event, so
a host failing before it is retried unseen, a call no host answers gets the real status
and body, and a normal stream reaches the client byte for byte."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest

from harness.fleet.config import parse_fleet
from harness.gateway import GatewayServer
from harness.testing.lmstudio import Faults, TestHost

pytestmark = pytest.mark.integration
REPLY = {
    "id": "x",
    "object": "chat.completion",
    "model": "m",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}}],
    "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
}


def _read_request(conn: socket.socket) -> str | None:
    """Read one whole HTTP request (head and body) from ``conn``; its path, or None when
    the client closed before its head was in."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    length = next(
        (int(h.split(b":")[1]) for h in head.split(b"\r\n")
         if h.lower().startswith(b"content-length")),
        0,
    )  # fmt: skip
    while len(rest) < length:
        rest += conn.recv(65536)
    return head.split(b" ")[1].decode()


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
                path = _read_request(conn)
                if path is None:
                    continue
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


CHUNKS = [
    {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
     "choices": [{"index": 0, "delta": {"role": "assistant", "content": "hel"},
                  "finish_reason": None}]},
    {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
     "choices": [{"index": 0, "delta": {"content": "lo"}, "finish_reason": "stop"}]},
    {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [],
     "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}},
]  # fmt: skip
CHAT_SSE = (
    b"".join(b"data: " + json.dumps(c, separators=(",", ":")).encode() + b"\n\n" for c in CHUNKS)
    + b"data: [DONE]\n\n"
)
RESPONSES_SSE = (
    b'event: response.created\ndata: {"type":"response.created","response":{"id":"r"}}\n\n'
    b'event: response.output_text.delta\ndata: {"type":"response.output_text.delta",'
    b'"delta":"hi"}\n\n'
    b'event: response.completed\ndata: {"type":"response.completed","response":{"id":"r",'
    b'"usage":{"input_tokens":3,"output_tokens":1,"total_tokens":4}}}\n\n'
)
SSE_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"


class ScriptedHost:
    """A raw HTTP host: each POST gets the next action of ``script`` (the last repeats):
    ``sse`` (the stream for its endpoint), ``head-close`` (200 and its headers, then the
    connection closed before any event) or ``400``."""

    def __init__(self, script: list[str]) -> None:
        self.script = script
        self.posts: list[str] = []
        self.server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}"

    def serve(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self.one, args=(conn,), daemon=True).start()

    def one(self, conn: socket.socket) -> None:
        with conn:
            path = _read_request(conn)
            if path is None:
                return
            if path.endswith("/models"):
                body = json.dumps({"data": [{"id": "m"}]}).encode()
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close"
                    b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
                )
                return
            self.posts.append(path)
            action = self.script[min(len(self.posts), len(self.script)) - 1]
            if action == "400":
                body = b'{"error": {"message": "bad request, says the host"}}'
                conn.sendall(
                    b"HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\n"
                    b"Connection: close\r\nContent-Length: " + str(len(body)).encode()
                    + b"\r\n\r\n" + body
                )  # fmt: skip
            elif action == "sse":
                conn.sendall(SSE_HEAD + (RESPONSES_SSE if "responses" in path else CHAT_SSE))
            elif action == "head-close":
                conn.sendall(SSE_HEAD)

    @contextmanager
    def running(self) -> Iterator[ScriptedHost]:
        threading.Thread(target=self.serve, daemon=True).start()
        try:
            yield self
        finally:
            self.server.close()


def fleet(*hosts: tuple[str, str], **routing: object) -> object:
    return parse_fleet(
        {
            "hosts": [{"name": n, "base_url": u} for n, u in hosts],
            "models": {"m": {"upstream": "m"}},
            "routing": {"cooldown": {"base_s": 0.3, "max_s": 2}, "max_wait_s": 0, **routing},
        }
    )


def ask(gw: GatewayServer, key: str, path: str = "/chat/completions") -> httpx.Response:
    body = {
        "model": "m",
        "stream": True,
        "stream_options": {"include_usage": True},
        "messages": [{"role": "user", "content": "hi"}],
    }
    if "responses" in path:
        body = {"model": "m", "stream": True, "input": "hi"}
    return httpx.post(
        gw.base_url + path, json=body, headers={"Authorization": f"Bearer {key}"}, timeout=30
    )


@pytest.mark.parametrize(
    ("path", "expected"),
    [("/chat/completions", CHAT_SSE), ("/responses", RESPONSES_SSE)],
    ids=["chat", "responses"],
)
def test_a_normal_stream_reaches_the_client_byte_for_byte(path: str, expected: bytes) -> None:
    with ScriptedHost(["sse"]).running() as h, GatewayServer(fleet(("h", h.url))) as gw:
        r = ask(gw, gw.issue_key("t"), path)
        rows = gw.telemetry()
    assert r.status_code == 200 and r.content == expected
    assert r.headers["content-type"].startswith("text/event-stream")
    assert r.headers["cache-control"] == "no-cache"
    assert [(x["status"], x["incomplete"]) for x in rows] == [(200, False)]
    assert rows[0]["prompt_tokens"] == 3


def test_a_host_failing_before_its_first_event_is_retried_unseen() -> None:
    bad, good = ScriptedHost(["head-close"]), ScriptedHost(["sse"])
    with bad.running(), good.running():
        cfg = fleet(("bad", bad.url), ("good", good.url), strategy="round_robin")
        with GatewayServer(cfg) as gw:
            key = gw.issue_key("t")
            replies = [ask(gw, key) for _ in range(4)]
            rows = gw.telemetry()
    assert bad.posts, "the failing host was never tried"
    assert all(r.status_code == 200 and r.content == CHAT_SSE for r in replies)
    broken = [x for x in rows if x["host"] == "bad"]
    assert len(broken) == len(bad.posts)
    assert all(x["status"] == "stream_broken" for x in broken)
    calls = {x["call"] for x in broken}
    assert all(any(y["call"] == c and y["status"] == 200 for y in rows) for c in calls)


def test_every_host_failing_gives_the_client_the_real_status_and_body() -> None:
    limits = Faults(error_rate=1.0)
    a, b = TestHost(models=["m"], faults=limits), TestHost(models=["m"], faults=limits)
    with a, b, GatewayServer(fleet(("a", a.url), ("b", b.url), max_attempts=2)) as gw:
        r = ask(gw, gw.issue_key("t"))
        rows = gw.telemetry()
    assert r.status_code == 500
    assert r.json()["error"]["message"] == "simulated internal error"  # the host's own
    assert sorted(x["status"] for x in rows) == [500, 500]


def test_a_host_refusing_the_request_gives_its_status_and_body() -> None:
    with ScriptedHost(["400"]).running() as h, GatewayServer(fleet(("h", h.url))) as gw:
        r = ask(gw, gw.issue_key("t"))
        rows = gw.telemetry()
    assert r.status_code == 400 and r.json()["error"]["message"] == "bad request, says the host"
    assert [x["status"] for x in rows] == [400]
