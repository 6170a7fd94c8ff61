"""The mock upstream with this era's faults (a subclass of the app kit's mock)."""

import contextlib
import json
import select
import socket
import struct
import threading
import time
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from harness.appkit.mockdep import RESOURCE, MockUpstream
from harness.appkit.mockdep import _Handler as MockHandler
from harness.appkit.seeding import between

from .schedule import (
    backoff_schedule,
    base_path,
    blip_pages,
    cursor_in,
    dataset,
    escaped_page,
    resets,
    slow_503s,
    slow_delays,
)

OUTSIDE = "/outside-base"  # what a path outside --upstream's is recorded under (404)


#: the longest a start's first page ask waits for the app to answer /health (the SPEC:
#: /health answers "as soon as it starts", so an app that asks first and serves after
#: the answer is seen waiting here), and for the browser's look at the still empty page,
#: all told: well under the 6 s a client waits for an answer
GATE_S = 4.0
LOOK_S = 4.5


class _Handler(MockHandler):
    """The kit's handler, plus two answers: a *reset* (the connection closed without an
    answer, RST) and a slow answer that notices its client gave up (closed the socket),
    so that a client that timed out and asks again is not counted as concurrent, while
    one that asks again with the first request still open is."""

    mock: "Upstream"

    def _answer(self) -> None:
        self.mock.gate_wait(self.path)
        status, body, delay, headers = self.mock.decide(self.command, self.path)
        seq, page = self.mock.asked()
        if status == 0:  # reset: no answer at all
            self.mock.done(False)
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                )
                self.connection.close()
            return
        if delay <= 0:
            self._send(status, body, delay, headers, seq=seq)
            return
        # a slow answer (a late 503 too): in flight while it takes its time, unless its
        # client gives up (a timeout) or dies (a SIGKILL): a restarted app's ask is not
        # concurrent with the dead one's
        conn = self.connection
        self.mock.slow_open(conn, page)
        end = time.monotonic() + delay
        while time.monotonic() < end:
            if self.mock.slow_abandoned(conn):
                return  # the client gave up: no answer, nothing more in flight
            time.sleep(0.02)
        if self.mock.slow_close(conn):
            self._send(status, body, 0.0, headers, counted=False, seq=seq)

    def _send(
        self,
        status: int,
        body: Any,
        delay: float,
        headers: dict[str, str],
        *,
        counted: bool = True,
        seq: int | None = None,
    ) -> None:
        finished = not counted
        try:
            if delay < 0:
                self.mock._release.wait(self.mock.hold_max)
            payload = self.mock.encode(cursor_in(self.path), body)
            if not finished:
                self.mock.done(delay < 0)
                finished = True
            if seq is not None:  # before any byte leaves: a pause is judged from here
                self.mock.answered(seq)
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


def _closed(conn: socket.socket) -> bool:
    """The peer closed (or reset) this connection and sent nothing more."""
    with contextlib.suppress(BlockingIOError, InterruptedError):
        ready, _, _ = select.select([conn], [], [], 0)
        if not ready:
            return False
        try:
            return conn.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
        except OSError:
            return True
    return False


class Upstream(MockUpstream):
    """The mock upstream with this era's faults: the backoff page's run of 503s (some
    with ``Retry-After``, see ``backoff_schedule``), the reset page's first asks closed
    without an answer, a plain 503 blip on the other pages after the kill page, the slow
    page's first ask answered 503 after ``slow_503_s`` and its retry 200 after
    ``slow_delay`` (unless its client gives up first: a ``gave-up`` line in the trace).
    Some 503s take a drawn while to arrive (``slow_503s``); every 503 notes when its
    answer left (an ``answered`` line naming the ask's ``seq``), so a pause is judged from
    the answer, not the ask. It serves under a drawn path (``base_url``) and answers 404
    elsewhere. It notes when the held kill page was asked for and when its answer left,
    on the monotonic clock, and calls ``on_answer(page, phase)`` as a page's 200 is
    decided (the write trap's arm) and ``on_503(page, n)`` at each 503 of the backoff
    page (the mid-sync look at the page)."""

    held_since: float | None = None
    held_until: float | None = None

    def __init__(self, seed: str, trace: Path) -> None:
        slow_503, slow_200 = slow_delays(seed)
        super().__init__(seed, trace, slow_delay=slow_200, dataset=dataset(seed))
        self.slow_503_s = slow_503
        self.run, self.retry_afters = backoff_schedule(seed)
        self.resets = resets(seed)
        self.blips = blip_pages(self.dataset)
        self.escaped = escaped_page(seed, self.dataset)
        backoff = self.dataset.faults.backoff_page
        self.late_503s = {
            (backoff if page < 0 else page, n): s
            for (page, n), s in slow_503s(seed, self.blips).items()
        }
        self.base_path = base_path(seed)
        self.on_answer: Any = None
        self.on_503: Any = None
        self.ui_at = between(seed, "invoice-sync:4.1:ui-at", 5, 8)  # the look mid-sync
        # open, gone (client gave up), answered; and the page asked for
        self._slow: dict[socket.socket, tuple[str, int | None]] = {}
        self._local = threading.local()
        self._gate: tuple[threading.Event, threading.Event] | None = None

    # -- a start's first ask, held until the app serves --------------------------------
    def gate(self) -> tuple[threading.Event, threading.Event]:
        """Hold the next page ask (a start's first) until ``served`` is set (the app
        answered /health in this start: the run sets it when the start is seen) or
        ``GATE_S`` passed, then until ``looked`` (the browser saw the page before any
        page of this start was answered) up to ``LOOK_S`` in all. The trace notes
        whether the app was serving before its ask was let through [M-HEALTH-2]."""
        served, looked = threading.Event(), threading.Event()
        with self._lock:
            self._gate = (served, looked)
        return served, looked

    def gate_wait(self, raw_path: str) -> None:
        """In the handler, before the ask is decided: wait at the gate when one is set
        and this is a page ask."""
        split = urlsplit(self._within(raw_path))
        page = self.dataset.page_of(cursor_in(raw_path))
        if split.path != RESOURCE or page is None:
            return
        with self._lock:
            gate, self._gate = self._gate, None
        if gate is None:
            return
        served, looked = gate
        began = time.monotonic()
        ok = served.wait(GATE_S)
        waited = time.monotonic() - began
        looked.wait(max(0.0, LOOK_S - waited))
        with self._lock:
            mark = {"phase": self._phase, "mark": "gate", "page": page, "served": ok}
            self._write({**mark, "waited_s": round(waited, 3)})

    @property
    def base_url(self) -> str:
        """What the app is given as ``--upstream``: the root and the drawn path."""
        return self.url + self.base_path

    def encode(self, cursor: str | None, body: Any) -> bytes:
        """A page's JSON as UTF-8 text, its non-ASCII characters as they are (RFC 8259's
        encoding; ``application/json`` has no charset parameter), except on the drawn
        ``escaped_page``, which spells them as ``\\u`` escapes (astral ones as surrogate
        pairs): both forms the SPEC's JSON allows reach the app on every seed."""
        page = self.dataset.page_of(cursor)
        return json.dumps(body, ensure_ascii=page == self.escaped).encode("utf-8")

    def start(self) -> None:
        """The kit's start with this era's handler."""
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

    # -- an answer's bookkeeping (the handler's thread) ----------------------------------
    def asked(self) -> tuple[int | None, int | None]:
        """The seq of this thread's last ask when its answer is a 503 of ours (its leaving
        is noted), and the page it asked for."""
        return getattr(self._local, "seq", None), getattr(self._local, "page", None)

    def answered(self, seq: int) -> None:
        with self._lock:
            self._write({"phase": self._phase, "mark": "answered", "answer_to": seq})

    # -- the slow answers' connections ---------------------------------------------------
    def slow_open(self, conn: socket.socket, page: int | None = None) -> None:
        with self._lock:
            self._slow[conn] = ("open", page)

    def slow_abandoned(self, conn: socket.socket) -> bool:
        """True once the slow answer's client closed its connection (then it no longer
        counts as in flight; a ``gave-up`` line records when)."""
        with self._lock:
            self._reap()
            return self._slow.get(conn, ("", None))[0] == "gone"

    def slow_close(self, conn: socket.socket) -> bool:
        """The slow answer is about to leave: False when its client already gave up."""
        with self._lock:
            self._reap()
            state, page = self._slow.get(conn, ("", None))
            if state != "open":
                return False
            self._slow[conn] = ("answered", page)
            self._inflight -= 1
            return True

    def _reap(self) -> None:  # under the lock
        for conn, (state, page) in list(self._slow.items()):
            if state == "open" and _closed(conn):
                self._slow[conn] = ("gone", page)
                self._inflight -= 1
                self._write({"phase": self._phase, "mark": "gave-up", "page": page})

    def _within(self, raw_path: str) -> str:
        """The path under --upstream's, or one recorded outside it (a 404)."""
        if raw_path.startswith(self.base_path + "/"):
            return raw_path[len(self.base_path) :]
        return OUTSIDE + raw_path

    def decide(self, method: str, raw_path: str) -> tuple[int, Any, float, dict[str, str]]:
        self._local.seq, self._local.page = None, None
        raw_path = self._within(raw_path)
        split = urlsplit(raw_path)
        cursor = cursor_in(raw_path)
        page = self.dataset.page_of(cursor) if split.path == RESOURCE else None
        faults = self.dataset.faults
        with self._lock:
            self._reap()  # a client that gave up on a slow answer is not concurrent
            offline = self._offline
            failed = self._failures.get(page, 0) if page is not None else 0
            fault = None
            if method != "GET" or split.path != RESOURCE or offline or page is None:
                pass  # the kit's answers: 404, offline 503, bad cursor
            elif page == faults.backoff_page and failed < self.run:
                fault = "retry-after" if failed + 1 in self.retry_afters else "unavailable"
            elif page == faults.retry_after_page and failed < self.resets:
                fault = "reset"
            elif page == faults.slow_page and not failed:
                fault = "slow-503"
            elif page in self.blips and not failed:
                fault = "blip"
            if fault is not None:
                self._failures[page] = failed + 1  # type: ignore[index]
                inflight = self._inflight - self._delayed
                self._inflight += 1
                status = 0 if fault == "reset" else 503
                delay = (
                    self.slow_503_s
                    if fault == "slow-503"
                    else self.late_503s.get((page, failed + 1), 0.0)  # type: ignore[arg-type]
                )
                self._write(
                    {
                        "phase": self._phase,
                        "method": method,
                        "path": split.path,
                        "cursor": cursor,
                        "page": page,
                        "status": status,
                        "fault": fault,
                        "items": 0,
                        "inflight": inflight,
                        **({"delay_s": delay} if delay else {}),
                        **(
                            {"retry_after": self.retry_afters[failed + 1]}
                            if fault == "retry-after"
                            else {}
                        ),
                    }
                )
                if status:
                    self._local.seq, self._local.page = self._seq, page
                headers = (
                    {"Retry-After": str(self.retry_afters[failed + 1])}
                    if fault == "retry-after"
                    else {}
                )
                if page == faults.backoff_page and self.on_503 is not None:
                    self.on_503(page, failed + 1)
                return status, {"error": fault}, delay, headers
        answer = super().decide(method, raw_path)
        if answer[2] > 0:
            self._local.page = page  # the kit's slow answer
        if answer[2] < 0 and self.held_since is None:
            self.held_since = time.monotonic()
        if answer[0] == 200 and page is not None and self.on_answer is not None:
            self.on_answer(page, self._phase)
        return answer

    def done(self, delayed: bool) -> None:
        if delayed and self.held_until is None:
            self.held_until = time.monotonic()
        super().done(delayed)
