"""A seeded mock upstream serving ``GET /v1/invoices?cursor=...``, with a JSONL trace.

Faults (positions from the seed, see ``fixtures``): the *kill page* is held the first
time (``kill_point`` is set; the answer waits for ``release()`` or ``hold_max``
seconds), so a suite can SIGKILL the app mid-sync at a known point; the *slow page* is
answered after ``slow_delay`` seconds, once; the *backoff page* answers 503 several
times in a row; the *Retry-After page* answers 503 once with a ``Retry-After`` header;
``set_offline(True)`` answers 503 to everything.

The mock runs in the scorer's process (never the app's user) and writes the trace into
the scorer's evidence folder, which the confined app cannot reach. Each line has a
sequence number ``seq``, ``t_ms`` (monotonic milliseconds since the mock started, for
time-aware checks), the phase, and ``inflight`` (other requests being answered when it
arrived, not counting the held answer, whose client is killed while it waits; a slow
answer counts: a client that asks again before it came is concurrent). Which
requests arrive is deterministic for a deterministic client; the times are
measurements, so checks grade them against tolerances, never exact values.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlsplit

from harness.appkit.fixtures import (
    BACKOFF_FAILURES,
    RETRY_AFTER,
    SLOW_DELAY,
    Dataset,
    build_dataset,
)

RESOURCE = "/v1/invoices"


class MockUpstream:
    """The mock dependency: start with ``with MockUpstream(seed, trace) as mock``."""

    def __init__(
        self,
        seed: str,
        trace: Path,
        *,
        hold_max: float = 5.0,
        slow_delay: float = SLOW_DELAY,
        dataset: Dataset | None = None,
    ) -> None:
        self.seed = seed
        self.dataset = dataset or build_dataset(seed)
        self.trace = Path(trace)
        self.hold_max = hold_max
        self.slow_delay = slow_delay
        self.kill_point = threading.Event()
        self._release = threading.Event()
        self._lock = threading.Lock()
        self._seq = 0
        self._t0 = time.monotonic()
        self._phase = "initial-sync"
        self._offline = False
        self._inflight = 0
        self._delayed = 0  # held answers still pending (the app is killed while it waits)
        self._failures: dict[int, int] = {}
        self._slow_done = False
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
        self._t0 = time.monotonic()
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

    def now_ms(self) -> float:
        """Milliseconds since the mock started (the trace's clock)."""
        return round((time.monotonic() - self._t0) * 1000.0, 1)

    # -- control -----------------------------------------------------------------------
    def mark_phase(self, phase: str) -> None:
        """Start a new phase: later requests are recorded under it."""
        with self._lock:
            self._phase = phase
            self._write({"mark": "phase", "phase": phase})

    def set_offline(self, offline: bool) -> None:
        with self._lock:
            self._offline = offline

    def release(self) -> None:
        """Let the held kill-page answer go (to a client that may be dead by now)."""
        self._release.set()

    release_slow = release  # the 1.x name

    def records(self) -> list[dict[str, Any]]:
        """The trace so far, parsed."""
        with self._lock:
            text = self.trace.read_text(encoding="utf-8")
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    # -- request handling (called from server threads) ---------------------------------
    def _write(self, record: dict[str, Any]) -> None:
        self._seq += 1
        line = json.dumps(
            {"seq": self._seq, "t_ms": self.now_ms(), **record},
            sort_keys=True,
            separators=(",", ":"),
        )
        with self.trace.open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")

    def decide(self, method: str, raw_path: str) -> tuple[int, Any, float, dict[str, str]]:
        """Record one request; return (status, body, delay, headers) for the handler.

        ``delay`` < 0 means: hold until ``release()``.
        """
        split = urlsplit(raw_path)
        cursor = parse_qs(split.query).get("cursor", [None])[0] or None
        page = self.dataset.page_of(cursor) if split.path == RESOURCE else None
        faults = self.dataset.faults
        status, fault, delay = 200, None, 0.0
        body: dict[str, Any] = {}
        items: list[dict[str, Any]] = []
        headers: dict[str, str] = {}
        with self._lock:
            inflight = self._inflight - self._delayed
            self._inflight += 1
            if split.path != RESOURCE or method != "GET":
                status, fault = 404, "not-found"
            elif self._offline:
                status, fault = 503, "offline"
            elif page is None:
                status, fault = 400, "bad-cursor"
            elif page == faults.backoff_page and self._failures.get(page, 0) < BACKOFF_FAILURES:
                self._failures[page] = self._failures.get(page, 0) + 1
                status, fault = 503, "unavailable"
            elif page == faults.retry_after_page and not self._failures.get(page):
                self._failures[page] = 1
                status, fault = 503, "retry-after"
                headers["Retry-After"] = str(RETRY_AFTER)
            else:
                if page == faults.kill_page and not self.kill_point.is_set():
                    delay, fault = -1.0, "hold"
                elif page == faults.slow_page and not self._slow_done:
                    self._slow_done = True
                    delay, fault = self.slow_delay, "slow"
                items = [inv.as_json() for inv in self.dataset.pages[page]]
                body = {"data": items, "next_cursor": self.dataset.next_cursor(page)}
            self._write(
                {
                    "phase": self._phase,
                    "method": method,
                    "path": split.path,
                    "cursor": cursor,
                    "page": page,
                    "status": status,
                    "fault": fault,
                    "items": len(items),
                    "inflight": inflight,
                }
            )
            if delay < 0:
                self._delayed += 1
            if delay < 0:
                self.kill_point.set()
        if status != 200:
            body = {"error": fault}
        return status, body, delay, headers

    def done(self, delayed: bool) -> None:
        with self._lock:
            self._inflight -= 1
            self._delayed -= int(delayed)


class _Handler(BaseHTTPRequestHandler):
    mock: MockUpstream
    protocol_version = "HTTP/1.1"

    def _answer(self) -> None:
        status, body, delay, headers = self.mock.decide(self.command, self.path)
        finished = False
        try:
            if delay < 0:
                self.mock._release.wait(self.mock.hold_max)
            elif delay > 0:
                time.sleep(delay)
            payload = json.dumps(body).encode()
            # no longer in flight before any byte leaves: ``end_headers`` already sends
            # the status line (the socket writer is unbuffered), and a client may retry
            # a 503 as soon as it reads it; that request must not count as concurrent
            self.mock.done(delay < 0)
            finished = True
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for key, value in headers.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(payload)
        except OSError:
            pass  # the client was killed or gave up while we held its answer
        finally:
            if not finished:
                self.mock.done(delay < 0)

    do_GET = _answer

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the default stderr access log; the trace is the record."""
