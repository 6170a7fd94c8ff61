"""The app's /health while the vendor holds a page: the boot ask ``boot.health``
grades and the watch that asks over and over during the hold (M-HEALTH-1)."""

from __future__ import annotations

import threading
import time
from typing import Any

from harness.appkit.fetch import Fetched, get
from harness.appkit.procs import AppProcess

HEALTH_PROMPT_S = 3.0  # "promptly" (M-HEALTH-1): an answer within this many seconds


def first_health(app: AppProcess, vendor: Any) -> tuple[Fetched, bool]:
    """The ask ``boot.health`` (M-RUN-1) grades, made once the app is healthy, and
    whether it fell in the vendor's page hold: an ask that got no answer while the vendor
    held a page is the health watch's finding (M-HEALTH-1), not a boot failure, so the
    suite asks again after the respawn and grades that answer instead. (A fast app can
    reach the held page before this ask; a /health that waits on the vendor then hangs
    here, and boot.health would charge M-RUN-1 for it on some machines and not others.)"""
    got = get(app.url("/health"), timeout=HEALTH_PROMPT_S)
    return got, got.status is None and vendor.kill_point.is_set()


class HealthWatch:
    """Asks ``GET /health`` over and over while the vendor holds its page (M-HEALTH-1).

    The held page may be asked for before the app's first health answer (a fast app on
    an early page): its boot poll then waits on a /health that the page blocks, and the
    suite's own mid-sync ask comes only after the page was let go. This thread starts
    asking the moment the page is held, whatever the app is doing, and records every ask
    that got no answer within ``HEALTH_PROMPT_S`` while the page was held; a refused
    connection (the app not listening yet) is not counted.
    """

    def __init__(self, vendor: Any, app: AppProcess, wait: float) -> None:
        self.stalls: list[str] = []
        self._vendor, self._app, self._wait = vendor, app, wait
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="health-watch", daemon=True)

    def __enter__(self) -> HealthWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> list[str]:
        """Stop asking (before the app is killed); the stalls seen so far."""
        self._stop.set()
        return list(self.stalls)

    def _watch(self) -> None:
        vendor = self._vendor
        if not vendor.kill_point.wait(self._wait):
            return
        while not self._stop.is_set() and vendor.held_until is None:
            port = self._app.port
            if port is None:
                self._stop.wait(0.1)
                continue
            asked = time.monotonic()
            got = get(f"http://127.0.0.1:{port}/health", timeout=HEALTH_PROMPT_S)
            took = time.monotonic() - asked
            if self._stop.is_set():
                return  # the app is being killed: this ask's end is no measurement
            if not got.ok and took >= HEALTH_PROMPT_S * 0.95:
                since = asked - (vendor.held_since or asked)
                self.stalls.append(
                    f"GET /health asked {since:.1f} s into the page hold: no answer in "
                    f"{HEALTH_PROMPT_S:g} s ({got.error or got.status})"
                )
            self._stop.wait(0.25)
