"""A streamed reply is opened inside its own ASGI call (``pending.py``): the client sees
no status and no byte before the host's first event. A host failing before that event is
retried unseen, a call no host answers gets the real status and body, a client leaving
before it frees the host and closes the upstream with one line, and a normal stream
reaches the client byte for byte as before."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest

from harness.fleet.config import parse_fleet
from harness.gateway import GatewayServer
from harness.testing.lmstudio import Faults, TestHost

pytestmark = pytest.mark.integration

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
    connection closed before any event), ``hang`` (no answer at all), ``head-hang`` (200
    and headers, then nothing) or ``400``. ``closed`` is set once a hanging request's
    connection is closed by the gateway."""

    def __init__(self, script: list[str]) -> None:
        self.script = script
        self.posts: list[str] = []
        self.closed = threading.Event()
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
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    return
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
            elif action in ("hang", "head-hang"):
                if action == "head-hang":
                    conn.sendall(SSE_HEAD)
                conn.settimeout(10)
                try:
                    if conn.recv(1) == b"":
                        self.closed.set()
                except OSError:
                    self.closed.set()

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


@pytest.mark.parametrize(("action", "status"), [("hang", "client_gone"), ("head-hang", 200)])
def test_a_client_leaving_before_the_first_event_frees_the_host(
    action: str, status: object
) -> None:
    """The host never sends an event: the gateway notices the client leave, closes the
    upstream request, frees the host and writes one line (before, it waited for the
    first event however long the host took)."""
    with ScriptedHost([action]).running() as h, GatewayServer(fleet(("h", h.url))) as gw:
        key = gw.issue_key("t")
        body = json.dumps(
            {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
        ).encode()
        port = int(gw.base_url.rsplit(":", 1)[1].split("/")[0])
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.sendall(
                b"POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\n"
                b"Authorization: Bearer " + key.encode() + b"\r\n"
                b"Content-Type: application/json\r\nContent-Length: "
                + str(len(body)).encode() + b"\r\n\r\n" + body
            )  # fmt: skip
            deadline = time.monotonic() + 5
            while not h.posts and time.monotonic() < deadline:
                time.sleep(0.02)
            assert h.posts, "the gateway never reached the host"
            s.settimeout(0.3)
            with pytest.raises(TimeoutError):
                s.recv(1)  # no status and no byte before the first event
        assert h.closed.wait(5), "the upstream request was left open"
        deadline = time.monotonic() + 5
        while not gw.telemetry() and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.3)  # a second line would come now
        rows = gw.telemetry()
        hosts = gw.hosts()
        usage = gw.trial_usage("t")
    assert len(rows) == 1
    assert rows[0]["status"] == status and rows[0]["incomplete"] is True
    assert rows[0]["error"] == "client disconnected before the stream began"
    assert hosts["h"]["inflight"] == 0
    assert usage["incomplete"] == 1
    assert not gw.gateway.accounting.spent["t"].open  # the call's answer has ended
