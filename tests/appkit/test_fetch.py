"""The suites' HTTP and HTML helpers: failures as values, table rows, polling
(appkit/fetch.py)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from harness.appkit.fetch import Fetched, TableRow, call, get, poll, tbody_rows

pytestmark = pytest.mark.unit


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *_: object) -> None:
        pass

    def _send(self, status: int, body: str, kind: str = "application/json") -> None:
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path == "/json":
            self._send(200, '{"a": [1, 2]}')
        elif self.path == "/text":
            self._send(200, "caf\xe9 <b>", "text/html")
        else:
            self._send(404, "no such page", "text/plain")

    def do_PUT(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
        echo = {
            "method": self.command,
            "raw": raw,
            "type": self.headers.get("Content-Type"),
            "auth": self.headers.get("Authorization"),
            "extra": self.headers.get("X-Extra"),
        }
        self._send(409 if raw == "conflict" else 200, json.dumps(echo))


@pytest.fixture
def url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_get_reads_the_body_and_turns_errors_into_values(url: str) -> None:
    got = get(url + "/json")
    assert got.ok and got.status == 200 and got.error is None and got.json() == {"a": [1, 2]}
    text = get(url + "/text")
    assert text.text == "caf\xe9 <b>" and text.json() is None
    missing = get(url + "/nope")
    assert not missing.ok and missing.status == 404 and missing.error == "HTTP 404"
    assert missing.text == "no such page"


def test_no_answer_is_a_value_not_an_exception() -> None:
    gone = get("http://127.0.0.1:1/json", timeout=2)  # nothing listens on port 1
    assert gone.status is None and not gone.ok and gone.error
    called = call("http://127.0.0.1:1/x", timeout=2)
    assert called.status is None and called.error and called.took >= 0
    assert get("not a url").error is not None


def test_call_sends_json_a_token_and_headers(url: str) -> None:
    got = call(url + "/p", "PUT", {"k": 1}, token="t1", headers={"X-Extra": "e"})
    assert got.status == 200 and got.error is None and got.took > 0
    assert got.body == {
        "method": "PUT", "raw": '{"k": 1}', "type": "application/json",
        "auth": "Bearer t1", "extra": "e",
    }  # fmt: skip
    raw = call(url + "/p", "PUT", "conflict")  # a string goes as it is; an error status
    assert raw.status == 409 and raw.body is not None and raw.body["raw"] == "conflict"
    assert raw.body["auth"] is None
    plain = call(url + "/text")
    assert plain.status == 200 and plain.body is None and plain.text.startswith("caf")


def test_a_fetched_status_outside_2xx_is_not_ok() -> None:
    assert Fetched("u", 299).ok and not Fetched("u", 300).ok and not Fetched("u", 199).ok


def test_poll_returns_the_probes_last_answer_within_its_budget() -> None:
    answers = iter([False, False, True])
    assert poll(lambda: next(answers), budget=5, interval=0.01)
    start = time.monotonic()
    assert not poll(lambda: False, budget=0.2, interval=0.05)
    assert 0.2 <= time.monotonic() - start < 5
    assert poll(lambda: True, budget=0)  # a first yes counts even with no budget


def test_tbody_rows_reads_rows_ids_and_cells() -> None:
    html = """
    <table><thead><tr><th>head</th></tr></thead>
    <tbody>
      <tr data-id="a1"><td> Acme
         Corp </td><td>1.00 &amp; more</td></tr>
      <tr><th>x</th><td>y
    </tbody></table>
    <tr><td>outside</td></tr>
    <table><tbody><tr data-id="b"><td>last</td></tr></tbody></table>
    """
    assert tbody_rows(html) == [
        TableRow("a1", ("Acme Corp", "1.00 & more")),
        TableRow(None, ("x", "y")),
        TableRow("b", ("last",)),
    ]
    assert tbody_rows("<tbody><tr><td>cut") == [TableRow(None, ("cut",))]
