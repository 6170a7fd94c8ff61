"""A loopback HTTP server that writes a JSONL trace: the base of a suite's mocks and relays.

A scenario's mock dependency (a vendor, a fault-injecting relay) runs in the scorer's
process and records every request where the confined app cannot reach it: the trace is
the evidence. This module holds what every such mock repeats: serving on a
kernel-chosen 127.0.0.1 port in a thread (``TracedServer``: ``with Mock(...) as m``,
``m.url``), the trace itself (``seq``, ``t_ms`` monotonic milliseconds since the start,
the current ``phase``, then the caller's fields), once-only faults, the in-flight count
of a handler, and the two ways a handler answers: JSON (``send_json``) or a reset
connection (``reset``: RST, no answer).

The request logic stays in the suite: a subclass passes its handler class, which finds
the server object as ``self.server.owner``.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: Any = None


class TracedServer:
    """Serve ``handler`` on loopback and keep a JSONL trace at ``trace``."""

    def __init__(
        self, trace: Path, handler: type[BaseHTTPRequestHandler], *, phase: str = ""
    ) -> None:
        self.trace = Path(trace)
        self._handler = handler
        self._lock = threading.Lock()
        self._seq = 0
        self._t0 = time.monotonic()
        self._phase = phase
        self._once: set[tuple[str, object]] = set()
        self._inflight = 0
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------
    def __enter__(self) -> Any:
        self.trace.parent.mkdir(parents=True, exist_ok=True)
        self.trace.write_bytes(b"")
        self._t0 = time.monotonic()
        self._server = _Server(("127.0.0.1", 0), self._handler)
        self._server.owner = self
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join()

    def stopping(self) -> None:
        """Called before the server stops: release whatever a handler waits on."""

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("the traced server is not running")
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    # -- trace -------------------------------------------------------------------------
    @property
    def phase(self) -> str:
        return self._phase

    def now_ms(self) -> float:
        return round((time.monotonic() - self._t0) * 1000, 1)

    def mark_phase(self, phase: str, **fields: Any) -> None:
        """Start a phase: later records carry it (a ``mark`` record opens it)."""
        with self._lock:
            self._phase = phase
            self._write({"kind": "mark", **fields})

    def record(self, **fields: Any) -> None:
        with self._lock:
            self._write(fields)

    def _write(self, fields: dict[str, Any]) -> None:
        """Append one record; the caller holds ``_lock``."""
        self._seq += 1
        line = {"seq": self._seq, "t_ms": self.now_ms(), "phase": self._phase, **fields}
        with self.trace.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(line) + "\n")

    def records(self) -> list[dict[str, Any]]:
        with self._lock:
            text = self.trace.read_text(encoding="utf-8")
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    # -- request bookkeeping -----------------------------------------------------------
    def first(self, fault: str, key: object = None) -> bool:
        """True the first time ``fault`` fires for ``key`` (each fault happens once)."""
        with self._lock:
            if (fault, key) in self._once:
                return False
            self._once.add((fault, key))
            return True

    def enter(self) -> int:
        """One more request in flight; returns how many are (this one included)."""
        with self._lock:
            self._inflight += 1
            return self._inflight

    def leave(self) -> None:
        with self._lock:
            self._inflight -= 1


def reset(handler: BaseHTTPRequestHandler) -> None:
    """Drop the handler's connection without an answer (RST: SO_LINGER 0)."""
    handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    handler.close_connection = True
    handler.connection.close()


def send_raw(
    handler: BaseHTTPRequestHandler,
    status: int,
    raw: bytes,
    headers: dict[str, str] | None = None,
    content_type: str | None = None,
) -> None:
    """Answer with ``raw`` bytes (``Content-Length`` always set)."""
    handler.send_response(status)
    for key, value in (headers or {}).items():
        handler.send_header(key, value)
    if content_type:
        handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(raw)))
    handler.end_headers()
    handler.wfile.write(raw)


def send_json(
    handler: BaseHTTPRequestHandler,
    status: int,
    body: Any = None,
    headers: dict[str, str] | None = None,
) -> None:
    """Answer with compact JSON (no body, no Content-Type when ``body`` is None)."""
    raw = b"" if body is None else json.dumps(body, separators=(",", ":")).encode()
    send_raw(handler, status, raw, headers, None if body is None else "application/json")
