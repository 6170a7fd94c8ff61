"""The app kit's traced loopback server and payment helpers: what every payments mock repeats."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from harness.appkit.fetch import call, get
from harness.appkit.traced import TracedServer, reset, send_json

pytestmark = pytest.mark.unit


class _Echo(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        owner: _Mock = self.server.owner  # type: ignore[attr-defined]
        n = owner.enter()
        drop = self.path == "/drop" and owner.first("drop", self.path)
        owner.record(kind="get", path=self.path, status="reset" if drop else 200, inflight=n)
        # out of flight before any byte (or the reset) leaves: the client's next request
        # may arrive before this thread runs again, and must not count as concurrent
        owner.leave()
        if drop:
            reset(self)
        else:
            send_json(self, 200, {"path": self.path}, {"ETag": '"x"'})

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        auth = self.headers.get("Authorization")
        if auth != "Bearer t1":
            send_json(self, 401, {"error": "no token"})
            return
        send_json(self, 201, {"got": json.loads(raw), "key": self.headers.get("Idem")})


class _Mock(TracedServer):
    def __init__(self, trace: Path) -> None:
        super().__init__(trace, _Echo, phase="start")
        self.released = threading.Event()

    def stopping(self) -> None:
        self.released.set()


def test_traced_server_records_in_order_with_phases_and_once_faults(tmp_path: Path) -> None:
    with _Mock(tmp_path / "t" / "trace.jsonl") as mock:
        with urllib.request.urlopen(mock.url + "/a") as resp:
            assert json.loads(resp.read()) == {"path": "/a"} and resp.headers["ETag"] == '"x"'
        with pytest.raises((urllib.error.URLError, ConnectionError)):
            urllib.request.urlopen(mock.url + "/drop")
        mock.mark_phase("second", why="test")
        with urllib.request.urlopen(mock.url + "/drop") as resp:  # a fault fires once
            assert resp.status == 200
        got = mock.records()
    assert mock.released.is_set()  # stopping() ran on exit
    assert [r["seq"] for r in got] == [1, 2, 3, 4]
    assert [(r["phase"], r.get("status")) for r in got] == [
        ("start", 200),
        ("start", "reset"),
        ("second", None),
        ("second", 200),
    ]
    assert got[2] == {**got[2], "kind": "mark", "why": "test"}
    assert all(r["inflight"] == 1 for r in got if r["kind"] == "get")
    assert [r["t_ms"] for r in got] == sorted(r["t_ms"] for r in got)
    with pytest.raises(RuntimeError):
        _ = _Mock(tmp_path / "x.jsonl").url  # not started


def test_call_sends_json_and_a_token_and_returns_failures_as_values(tmp_path: Path) -> None:
    with _Mock(tmp_path / "trace.jsonl") as mock:
        ok = call(mock.url + "/p", "POST", {"a": 1}, "t1", headers={"Idem": "k"})
        assert ok.status == 201 and ok.body == {"got": {"a": 1}, "key": "k"} and ok.took >= 0
        denied = call(mock.url + "/p", "POST", "{}")
        assert denied.status == 401 and denied.body == {"error": "no token"}
        url = mock.url
    gone = call(url + "/p", timeout=2.0)  # the server has stopped
    assert gone.status is None and gone.error and gone.body is None


class _CutShort(BaseHTTPRequestHandler):
    """Promises a 15-byte body and closes after none of it (as a killed or hostile app)."""

    protocol_version = "HTTP/1.1"

    def log_message(self, fmt: str, *args: object) -> None:
        pass

    def _cut(self) -> None:
        self.send_response(503 if self.path == "/err" else 200)
        self.send_header("Content-Length", "15")
        self.end_headers()
        self.close_connection = True

    do_GET = _cut
    do_POST = _cut


def test_an_answer_cut_short_is_no_answer_not_an_exception() -> None:
    """``IncompleteRead`` is not an OSError: it once killed a suite's health-watch thread
    (so the watch recorded no stall). ``get`` and ``call`` return it as a value."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _CutShort)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        got = get(url + "/health", timeout=5.0)
        assert got.status is None and not got.ok and "IncompleteRead" in (got.error or "")
        called = call(url + "/p", "POST", {"a": 1}, "t1", timeout=5.0)
        assert called.status is None and "IncompleteRead" in (called.error or "")
        err = get(url + "/err", timeout=5.0)  # an error status whose body is cut short
        assert err.status == 503 and err.text == ""
    finally:
        server.shutdown()
        server.server_close()
