"""The scorer's watchers during the run: /health, /api/status, file writes, the page."""

import contextlib
import ctypes
import os
import select
import signal
import socket
import struct
import threading
import time
from pathlib import Path
from typing import Any

from harness.appkit.browser import (
    BrowserUnavailable,
    PageProbe,
    browser_session,
)
from harness.appkit.fetch import get
from harness.appkit.procs import AppProcess

from .evidence import Sample, UiSample, WatchLog
from .upstream import Upstream
from .user_view import ShownLog, install_watch, sweep, user_rows

HEALTH_AFTER_S = 1.0  # /health is asked this long into the wait on the held page


HEALTH_PROMPT_S = 3.0  # an ask of /health while the page is held is answered within this


WATCH_EVERY_S = 0.25  # the health watch's pause between two asks


EMPTY_LOOK_MS = 1000  # the empty page's scripts run this long before it is left


STATUS_EVERY_S = 0.3  # the status watch's pause between two samples


class HealthWatch:
    """Asks ``GET /health`` every ``WATCH_EVERY_S`` from the moment the kill page is held
    until its answer leaves, whatever the app is doing (booting included), and logs each
    ask (M-HEALTH-2). ``stop()`` before the app is killed: an ask cut by the kill is not
    the app's answer."""

    def __init__(self, upstream: Upstream, app: AppProcess, wait: float) -> None:
        self.log = WatchLog()
        self._upstream, self._app, self._wait = upstream, app, wait
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="health-watch", daemon=True)

    def __enter__(self) -> "HealthWatch":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> WatchLog:
        self._stop.set()
        self._thread.join(HEALTH_PROMPT_S + 1.0)
        return self.log

    def _run(self) -> None:
        up = self._upstream
        if not up.kill_point.wait(self._wait):
            return
        idle: socket.socket | None = None
        try:
            while not self._stop.is_set() and up.held_until is None:
                if self._app.port is None:
                    self._stop.wait(0.1)
                    continue
                if idle is None and self.log.answered:
                    idle = self._idle()
                self._ask()
                self._stop.wait(WATCH_EVERY_S)
        finally:
            if idle is not None:
                idle.close()

    def _idle(self) -> socket.socket | None:
        """A connection opened and left idle, as a browser's preconnect is, for the rest
        of the hold: a server that serves one connection at a time stalls on it."""
        port = self._app.port
        with contextlib.suppress(OSError):
            return socket.create_connection(("127.0.0.1", port), timeout=1.0) if port else None
        return None

    def _ask(self) -> None:
        up = self._upstream
        asked = time.monotonic()
        got = get(self._app.url("/health"), timeout=HEALTH_PROMPT_S)
        if self._stop.is_set():
            return
        if got.ok and got.json() == {"status": "ok"}:
            self.log.answered += int(up.held_until is None)  # answered during the hold
        elif got.status is None and time.monotonic() - asked < HEALTH_PROMPT_S * 0.9:
            self.log.refused += 1
        else:
            into = asked - (up.held_since or asked)
            idle = " (a connection held open idle)" if self.log.answered else ""
            self.log.stalls.append(
                f"GET /health asked {into:.1f} s into the hold{idle}: "
                f"{got.error or f'HTTP {got.status}'} (answer within {HEALTH_PROMPT_S:g} s)"
            )


class StatusWatch:
    """Samples ``GET /api/status`` every ``STATUS_EVERY_S`` for the whole run. A sample
    is kept only when the app's life did not change while it was asked (``life``, bumped
    by the run at each SIGKILL) and an HTTP answer came (a refused or cut ask, while the
    app is down or restarting, is nobody's answer)."""

    def __init__(self, upstream: Upstream, app: AppProcess) -> None:
        self.samples: list[Sample] = []
        self.health: list[Sample] = []  # GET /health, asked right after each status sample
        self.life = 0
        self._upstream, self._app = upstream, app
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="status-watch", daemon=True)

    def __enter__(self) -> "StatusWatch":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5.0)

    def _run(self) -> None:
        while not self._stop.wait(STATUS_EVERY_S):
            if self._app.port is None or not self._app.alive:
                continue
            life, at = self.life, self._upstream.now_ms()
            phase = self._upstream._phase
            got = get(self._app.url("/api/status"), timeout=2.0)
            rtt = (self._upstream.now_ms() - at) / 1000.0
            if got.status is not None and life == self.life and self._app.alive:
                self.samples.append(Sample(at, phase, got.status, got.json(), rtt))
            at = self._upstream.now_ms()
            health = get(self._app.url("/health"), timeout=2.0)
            rtt = (self._upstream.now_ms() - at) / 1000.0
            if health.status is not None and life == self.life and self._app.alive:
                self.health.append(Sample(at, phase, health.status, health.json(), rtt))


_IN_MODIFY, _IN_CREATE, _IN_MOVED_TO, _IN_ISDIR = 0x2, 0x100, 0x80, 0x40000000


class WriteTrap:
    """SIGKILLs the app at its first file write in the data folder after ``arm()``.

    The scorer watches the folder with inotify (another process: out of the app's reach)
    and kills the app's process group the moment an event arrives, which lands inside the
    write's transaction or between two of its writes: an app that stores a page's
    invoices and its next cursor in two transactions loses a page, or asks for a stored
    one again, when the kill falls between them.
    """

    def __init__(self, data: Path, app: AppProcess, nth: int = 1) -> None:
        self._data, self._app = data, app
        self._nth, self._seen = nth, 0  # kill at the nth file event after arm()
        self._libc = ctypes.CDLL(None, use_errno=True)
        self._fd = int(self._libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC))
        self.armed = threading.Event()
        self.fired = threading.Event()
        self.detail = ""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="write-trap", daemon=True)

    def __enter__(self) -> "WriteTrap":
        if self._fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(2.0)
        os.close(self._fd)

    def arm(self) -> None:
        """Watch every folder of the data tree now; the next event kills."""
        mask = _IN_MODIFY | _IN_CREATE | _IN_MOVED_TO
        for folder in [self._data, *(p for p in self._data.rglob("*") if p.is_dir())]:
            self._libc.inotify_add_watch(self._fd, str(folder).encode(), mask)
        self.armed.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            ready, _, _ = select.select([self._fd], [], [], 0.1)
            if not ready:
                continue
            try:
                raw = os.read(self._fd, 65536)
            except BlockingIOError:
                continue
            if self.armed.is_set():
                self._seen += _event_count(raw)
            if self._seen >= self._nth and not self.fired.is_set() and self._app.pid:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self._app.pid, signal.SIGKILL)
                self.detail = f"killed at a write ({_event_names(raw)})"
                self.fired.set()


def _event_count(raw: bytes) -> int:
    count, at = 0, 0
    while at + 16 <= len(raw):
        count += 1
        at += 16 + struct.unpack_from("iIII", raw, at)[3]
    return count


def _event_names(raw: bytes) -> str:
    names, at = [], 0
    while at + 16 <= len(raw):
        _, mask, _, size = struct.unpack_from("iIII", raw, at)
        name = raw[at + 16 : at + 16 + size].rstrip(b"\0").decode("utf-8", "replace")
        kind = "created" if mask & _IN_CREATE else "modified"
        names.append(f"{name or 'folder'} {kind}")
        at += 16 + size
    return ", ".join(names[:3])


class PageWatch:
    """A browser, launched when the run starts (its start-up load falls on the first
    life, not on the timed retries), on the app's page from ``go()`` (after the last
    mid-sync restart) to ``finish()``: console errors are collected all along (an
    auto-refresh that throws every few seconds is seen), every value a cell displays is
    reported all along (``user_view``'s watch), then the page is loaded afresh and read
    as a user reads it (scrolled with the wheel, ``user_view.user_rows``: rows, text,
    screenshot). Playwright's sync API stays on this thread."""

    def __init__(self, app: AppProcess, evidence_dir: Path) -> None:
        self._app, self._dir = app, evidence_dir
        self._go = threading.Event()
        self._finish = threading.Event()
        self._sample = threading.Event()
        self._empty, self._empty_done = threading.Event(), threading.Event()
        self.ready = threading.Event()  # the browser is up (or could not start)
        self.empty_looked = False  # the empty page was loaded (its console counted)
        self.during: UiSample | None = None
        self.probe: PageProbe | None = None
        self.error: str | None = None
        self.seconds = 0.0
        self.shown = ShownLog()  # every value a cell displayed, from go() to the end
        self.structure: dict[str, int] = {}  # tables, bodies, scroll positions at the end
        self._thread = threading.Thread(target=self._run, name="page-watch", daemon=True)

    def __enter__(self) -> "PageWatch":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._go.set()
        self._finish.set()
        self._thread.join(60.0)

    def go(self) -> None:
        self._go.set()

    def sample(self) -> None:
        """Read the page's rows now (mid-sync), between two reads of the API."""
        self._sample.set()

    def look_empty(self, wait: float) -> None:
        """Load the page now, while the first start's first page is held (its table is
        empty), let its scripts run ``EMPTY_LOOK_MS``, then leave it: its console errors
        count with the rest (M-UI-5). Returns when done, or after ``wait`` seconds."""
        self._empty.set()
        self._empty_done.wait(wait)

    def _look_empty(self, j: Any) -> None:
        from playwright.sync_api import Error as PlaywrightError

        self._empty.clear()
        with contextlib.suppress(PlaywrightError):
            j.goto(self._app.url("/"))
            j.page.wait_for_timeout(EMPTY_LOOK_MS)
            self.empty_looked = True
        with contextlib.suppress(PlaywrightError):
            j.page.goto("about:blank")  # no timer of the page runs on into the kill
        self._empty_done.set()

    def _look(self, j: Any, url: str) -> UiSample:
        from playwright.sync_api import Error as PlaywrightError

        before = [str(i.get("id")) for i in listing_of(self._app)]
        try:
            j.goto(url)
            ids = j.page.eval_on_selector_all(ROW_IDS, "rs => rs.map(r => r.dataset.id)")
            rows = [str(i) for i in ids]
        except PlaywrightError as exc:
            return UiSample(before, [], before, error=str(exc)[:200])
        after = [str(i.get("id")) for i in listing_of(self._app)]
        return UiSample(before, rows, after)

    def finish(self) -> None:
        self._finish.set()
        self._thread.join(60.0)
        if self._thread.is_alive():
            self.error = self.error or "the browser did not finish within 60 s"

    def _run(self) -> None:
        from playwright.sync_api import Error as PlaywrightError

        try:
            with browser_session(self._dir) as j:
                self.ready.set()
                while not self._go.wait(0.05):
                    if self._empty.is_set():
                        self._look_empty(j)
                if self._finish.is_set() and self._app.port is None:
                    return
                url, opened = self._app.url("/"), time.monotonic()
                install_watch(j.page, self.shown)
                with contextlib.suppress(PlaywrightError):
                    j.goto(url)  # mid-sync: the console is judged from here
                while not self._finish.is_set():
                    if self._sample.is_set() and self.during is None:
                        self.during = self._look(j, url)
                    with contextlib.suppress(PlaywrightError):
                        j.page.wait_for_timeout(200)
                try:
                    j.goto(url)
                except PlaywrightError as exc:
                    self.probe = PageProbe(
                        url, None, 0, 0, console_errors=j.console_errors, error=str(exc)
                    )
                    return
                scan_from = time.monotonic()
                seen = user_rows(j.page)
                rows = list(seen["rows"])
                self.structure = {k: int(seen[k]) for k in ("tables", "bodies", "positions")}
                self.structure["scan_ms"] = int((time.monotonic() - scan_from) * 1000)
                with contextlib.suppress(PlaywrightError):
                    sweep(j.page)
                    j.page.wait_for_timeout(100)
                self.probe = PageProbe(
                    url=url,
                    status=j.status,
                    visible_rows=sum(1 for r in rows if r["visible"]),
                    total_rows=len(rows),
                    rows=rows,
                    text=j.text(),
                    console_errors=list(j.console_errors),
                    screenshot=j.screenshot("invoices"),
                    content_type=j.content_type,
                )
                self.seconds = round(time.monotonic() - opened, 2)
        except BrowserUnavailable as exc:
            self.error = str(exc)
        finally:
            self.ready.set()
            self._empty_done.set()


ROW_IDS = "tbody tr"


def listing_of(app: AppProcess) -> list[dict[str, Any]]:
    data = get(app.url("/api/invoices"), timeout=5.0).json()
    return [i for i in data if isinstance(i, dict)] if isinstance(data, list) else []
