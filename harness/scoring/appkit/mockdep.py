"""A seeded mock upstream serving ``GET /v1/invoices?cursor=...``, with a JSONL trace.

Faults (positions from the seed, see ``fixtures``): one page answers 503 the first time
it is asked for; one page is *held* the first time (``slow_started`` is set, and the
answer waits for ``release_slow()`` or ``slow_hold`` seconds), which lets a suite
SIGKILL the app mid-sync at a deterministic point; ``set_offline(True)`` answers 503 to
everything (to prove an app serves stored data without the upstream).

Every request is written to the trace *when it arrives*, with a sequence number and the
current phase and no clock, so the same seed and the same client behaviour give a
byte-identical trace file.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlsplit

from harness.scoring.appkit.fixtures import Dataset, build_dataset

RESOURCE = "/v1/invoices"


class MockUpstream:
    """The mock dependency: start with ``with MockUpstream(seed, trace) as mock``."""

    def __init__(
        self, seed: str, trace: Path, *, slow_hold: float = 5.0, dataset: Dataset | None = None
    ) -> None:
        self.seed = seed
        self.dataset = dataset or build_dataset(seed)
        self.trace = Path(trace)
        self.slow_hold = slow_hold
        self.slow_started = threading.Event()
        self._release = threading.Event()
        self._lock = threading.Lock()
        self._seq = 0
        self._phase = "initial-sync"
        self._offline = False
        self._failed_once: set[int] = set()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------
    def __enter__(self) -> MockUpstream:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self) -> None:
        """Bind 127.0.0.1 on a kernel-chosen port (no race) and serve in a thread."""
        self.trace.parent.mkdir(parents=True, exist_ok=True)
        self.trace.write_bytes(b"")
        handler = type("Handler", (_Handler,), {"mock": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, daemon=True, name="mock-upstream"
        )
        self._thread.start()

    def stop(self) -> None:
        self._release.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("mock upstream is not running")
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    # -- control -----------------------------------------------------------------------
    def mark_phase(self, phase: str) -> None:
        """Start a new phase: later requests are recorded under it."""
        with self._lock:
            self._phase = phase
            self._write({"mark": "phase", "phase": phase})

    def set_offline(self, offline: bool) -> None:
        with self._lock:
            self._offline = offline

    def release_slow(self) -> None:
        """Let the held slow-page answer go (to a client that may be dead by now)."""
        self._release.set()

    def hold(self) -> None:
        """Block the calling handler until ``release_slow()`` or ``slow_hold`` seconds."""
        self._release.wait(self.slow_hold)

    def records(self) -> list[dict[str, Any]]:
        """The trace so far, parsed."""
        with self._lock:
            text = self.trace.read_text(encoding="utf-8")
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    # -- request handling (called from server threads) ---------------------------------
    def _write(self, record: dict[str, Any]) -> None:
        self._seq += 1
        line = json.dumps({"seq": self._seq, **record}, sort_keys=True, separators=(",", ":"))
        with self.trace.open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")

    def decide(self, method: str, raw_path: str) -> tuple[int, dict[str, Any], bool]:
        """Record one request; return (status, body, hold) for the handler to send."""
        split = urlsplit(raw_path)
        cursor = parse_qs(split.query).get("cursor", [None])[0] or None
        page = self.dataset.page_of(cursor) if split.path == RESOURCE else None
        status, fault, hold = 200, None, False
        body: dict[str, Any] = {}
        with self._lock:
            if split.path != RESOURCE or method != "GET":
                status, fault = 404, "not-found"
            elif self._offline:
                status, fault = 503, "offline"
            elif page is None:
                status, fault = 400, "bad-cursor"
            elif page == self.dataset.faults.unavailable_page and page not in self._failed_once:
                self._failed_once.add(page)
                status, fault = 503, "unavailable"
            else:
                if page == self.dataset.faults.slow_page and not self.slow_started.is_set():
                    hold, fault = True, "slow"
                items = self.dataset.pages[page]
                body = {
                    "data": [inv.as_json() for inv in items],
                    "next_cursor": self.dataset.next_cursor(page),
                }
            self._write(
                {
                    "phase": self._phase,
                    "method": method,
                    "path": split.path,
                    "cursor": cursor,
                    "page": page,
                    "status": status,
                    "fault": fault,
                    "items": len(body.get("data", [])),
                }
            )
            if hold:
                self.slow_started.set()
        if status != 200:
            body = {"error": fault}
        return status, body, hold


class _Handler(BaseHTTPRequestHandler):
    mock: MockUpstream
    protocol_version = "HTTP/1.1"

    def _answer(self) -> None:
        status, body, hold = self.mock.decide(self.command, self.path)
        if hold:
            self.mock.hold()
        payload = json.dumps(body).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        except OSError:
            pass  # the client was killed while we held its answer

    do_GET = _answer

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the default stderr access log; the trace is the record."""
