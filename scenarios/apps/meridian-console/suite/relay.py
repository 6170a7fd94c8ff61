"""A fault-injecting HTTP relay between the two services (partitions, delays, holds).

``Relay(target, trace)`` listens on a fixed loopback port for the scorer's whole run and
forwards each GET to ``target()`` (a callable: the target's port may change when it is
respawned). Modes: ``pass``; ``refuse`` (the connection is reset: a partition);
``delay`` (answer after ``delay_s``); ``hold`` (the next request waits until
``release()``, then is reset: the scorer kills the caller meanwhile). Every request is
recorded (JSONL) with its mode and outcome.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


class Relay:
    def __init__(self, name: str, target: Callable[[], str | None], trace: Path) -> None:
        self.name = name
        self.target = target
        self.trace = Path(trace)
        self.mode = "pass"
        self.delay_s = 0.0
        self.held = threading.Event()
        self._release = threading.Event()
        self._lock = threading.Lock()
        self._t0 = time.monotonic()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Relay:
        self.trace.parent.mkdir(parents=True, exist_ok=True)
        self.trace.write_bytes(b"")
        handler = type("RelayHandler", (_Handler,), {"relay": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._release.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join()

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def set(self, mode: str, delay_s: float = 0.0) -> None:
        with self._lock:
            self.mode, self.delay_s = mode, delay_s
            if mode == "hold":
                self.held.clear()
                self._release.clear()
            self.record(kind="mode", mode=mode, delay_s=delay_s)

    def release(self) -> None:
        self._release.set()

    def record(self, **fields: Any) -> None:
        line = {"t_ms": round((time.monotonic() - self._t0) * 1000, 1), **fields}
        with self.trace.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(line) + "\n")

    def records(self) -> list[dict[str, Any]]:
        lines = self.trace.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]


class _Handler(BaseHTTPRequestHandler):
    relay: Relay
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt: str, *args: Any) -> None:
        pass

    def _reset(self) -> None:
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True
        self.connection.close()

    def do_GET(self) -> None:
        r = self.relay
        mode, delay = r.mode, r.delay_s
        if mode == "refuse":
            r.record(kind="request", path=self.path, mode=mode, status="reset")
            self._reset()
            return
        if mode == "hold":
            r.set("pass")
            r.record(kind="request", path=self.path, mode="hold", status="held")
            r.held.set()
            r._release.wait(20.0)
            self._reset()
            return
        if mode == "delay":
            time.sleep(delay)
        base = r.target()
        if not base:
            r.record(kind="request", path=self.path, mode=mode, status="no-target")
            self._reset()
            return
        try:
            with urllib.request.urlopen(base + self.path, timeout=10.0) as resp:
                status, ctype, raw = resp.status, resp.headers.get("Content-Type"), resp.read()
        except urllib.error.HTTPError as exc:
            status, ctype = exc.code, exc.headers.get("Content-Type")
            raw = exc.read() if exc.fp else b""
        except (urllib.error.URLError, OSError):
            r.record(kind="request", path=self.path, mode=mode, status="target-down")
            self._reset()
            return
        r.record(kind="request", path=self.path, mode=mode, status=status)
        try:
            self.send_response(status)
            self.send_header("Content-Type", ctype or "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)
        except OSError:
            pass
