"""Driving the app's HTTP API: one call, a JSON read, a paged walk of the listing,
the sync state, and the small concurrent load."""

from __future__ import annotations

import threading
import time
from typing import Any

from harness.appkit.fetch import Called as Call
from harness.appkit.fetch import call as fetch_call
from harness.appkit.fetch import get
from harness.appkit.procs import AppProcess

from .bounds import LOAD_REQUESTS


def call(url: str, method: str = "GET", body: Any = None, token: str | None = None) -> Call:
    """One scripted request to the app and its answer (10 s at most)."""
    return fetch_call(url, method, body, token, timeout=10.0)


def _json(app: AppProcess, path: str) -> Any:
    return get(app.url(path), timeout=10.0).json()


def _walk(app: AppProcess, query: str, per_page: int) -> tuple[list[dict[str, Any]] | None, Any]:
    """All items of /api/payments?query, page by page; None when it is not the SPEC's shape."""
    items: list[dict[str, Any]] = []
    total = None
    for page in range(1, 4000 // per_page + 3):
        sep = "&" if query else ""
        got = get(app.url(f"/api/payments?{query}{sep}per_page={per_page}&page={page}"))
        data = got.json()
        if not got.ok or not isinstance(data, dict) or not isinstance(data.get("items"), list):
            return (items or None), total
        total = data.get("total")
        items.extend(i for i in data["items"] if isinstance(i, dict))
        if not data["items"] or (isinstance(total, int) and len(items) >= total):
            break
    return items, total


def _sync_state(app: AppProcess) -> Any:
    state = _json(app, "/api/status")
    return state if isinstance(state, dict) else None


def _synced(app: AppProcess) -> bool:
    state = _sync_state(app)
    return bool(state) and state.get("sync") in ("done", "failed")


def _load(app: AppProcess) -> list[float]:
    paths = [f"/api/payments?per_page=100&page={1 + i % 15}" for i in range(LOAD_REQUESTS // 2)]
    paths += ["/api/summary"] * (LOAD_REQUESTS - len(paths))
    out: list[float] = []
    lock = threading.Lock()

    def worker(chunk: list[str]) -> None:
        for path in chunk:
            start = time.monotonic()
            got = get(app.url(path), timeout=10.0)
            took = time.monotonic() - start if got.ok else 10.0
            with lock:
                out.append(took)

    threads = [threading.Thread(target=worker, args=(paths[i::4],)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sorted(out)
