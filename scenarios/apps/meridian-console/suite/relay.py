"""A fault-injecting HTTP relay between the two services (partitions, delays, holds).

``Relay(target, trace)`` listens on a fixed loopback port for the scorer's whole run and
forwards each GET to ``target()`` (a callable: the target's port may change when it is
respawned). Modes: ``pass``; ``refuse`` (the connection is reset: a partition);
``delay`` (answer after ``delay_s``); ``hold`` (the next request waits until
``release()``, then is reset: the scorer kills the caller meanwhile). Every request is
recorded (JSONL, ``appkit.traced``) with its mode and outcome.
"""

from __future__ import annotations

import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from harness.appkit.traced import TracedServer, reset, send_raw


class Relay(TracedServer):
    def __init__(self, name: str, target: Callable[[], str | None], trace: Path) -> None:
        super().__init__(trace, _Handler, phase=name)
        self.name = name
        self.target = target
        self.mode = "pass"
        self.delay_s = 0.0
        self.held = threading.Event()
        self._release = threading.Event()
        self._mode_lock = threading.Lock()

    def stopping(self) -> None:
        self._release.set()

    def set(self, mode: str, delay_s: float = 0.0) -> None:
        with self._mode_lock:
            self.mode, self.delay_s = mode, delay_s
            if mode == "hold":
                self.held.clear()
                self._release.clear()
            self.record(kind="mode", mode=mode, delay_s=delay_s)

    def release(self) -> None:
        self._release.set()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    @property
    def relay(self) -> Relay:
        return self.server.owner  # type: ignore[attr-defined,no-any-return]

    def log_message(self, fmt: str, *args: object) -> None:
        pass

    def _reset(self) -> None:
        reset(self)

    def do_GET(self) -> None:
        r = self.relay
        mode, delay = r.mode, r.delay_s
        asked = r.now_ms()  # when the request came (``t_ms`` is when it was answered)

        def note(status: object, how: str = mode) -> None:
            r.record(kind="request", path=self.path, mode=how, status=status, asked_ms=asked)

        if mode == "refuse":
            note("reset")
            self._reset()
            return
        if mode == "hold":
            r.set("pass")
            note("held", "hold")
            r.held.set()
            r._release.wait(20.0)
            self._reset()
            return
        if mode == "delay":
            time.sleep(delay)
        base = r.target()
        if not base:
            note("no-target")
            self._reset()
            return
        try:
            with urllib.request.urlopen(base + self.path, timeout=10.0) as resp:
                status, ctype, raw = resp.status, resp.headers.get("Content-Type"), resp.read()
        except urllib.error.HTTPError as exc:
            status, ctype = exc.code, exc.headers.get("Content-Type")
            raw = exc.read() if exc.fp else b""
        except (urllib.error.URLError, OSError):
            note("target-down")
            self._reset()
            return
        note(status)
        try:  # noqa: SIM105  (try/except kept: calibrated code)
            send_raw(self, status, raw, content_type=ctype or "application/json")
        except OSError:
            pass
