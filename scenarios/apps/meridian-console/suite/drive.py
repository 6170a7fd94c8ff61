"""The scripted execution of apps/meridian-console: collects evidence, grades nothing.

Four SIGKILL points (ledgerd on the held page; ledgerd while the vendor holds a
creation; notifierd while the relay holds its read; both before a cold boot with the
vendor offline), two partitions (notifierd -> ledgerd refused, then delayed; ledgerd ->
notifierd refused for the error journey), the vendor's outage during the walk, and six
browser journeys (``browse.py``). Each step records what it saw in ``Evidence``; a dead
end stops the run and the checks read what is there.
"""

from __future__ import annotations

import signal
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from harness.appkit.fetch import Called as Call
from harness.appkit.fetch import call as call  # the run calls drive.call
from harness.appkit.fetch import get, poll
from harness.appkit.procs import AppNotHealthy, AppProcess

BAD_QUERIES = (
    "currency=GBP",
    "currency=eur",
    "status=paid",
    "day=2026-02-30",
    "day=29.03.2026",
    "per_page=0",
    "per_page=501",
    "page=0",
    "page=abc",
    "per_page=1.5",
    # what Python's own parsers take but the SPEC's forms are not
    "day=20260329",  # date.fromisoformat accepts the basic format
    "day=2026-W13-7",  # ... and ISO week dates
    "day=2026-3-29",  # strptime("%Y-%m-%d") accepts one-digit months
    "per_page=1_0",  # int() accepts digit separators
)
BAD_DRAFTS: tuple[Any, ...] = (
    {"amount_minor": 12.5, "currency": "EUR", "counterparty": "Acme"},
    {"amount_minor": "1000", "currency": "EUR", "counterparty": "Acme"},
    {"amount_minor": -5, "currency": "EUR", "counterparty": "Acme"},
    {"amount_minor": 0, "currency": "USD", "counterparty": "Acme"},
    {"amount_minor": 10**18 + 1, "currency": "CLF", "counterparty": "Acme"},
    {"amount_minor": 100, "currency": "GBP", "counterparty": "Acme"},
    {"amount_minor": 100, "currency": "JPY", "counterparty": "   "},
    {"amount_minor": 100, "currency": "JPY", "counterparty": "x" * 81},
    {"amount_minor": True, "currency": "KWD", "counterparty": "Acme"},
    [1, 2, 3],
    "not json",
)
DRAFTS: dict[str, tuple[str, dict[str, Any]]] = {
    "a": (
        "maker",
        {"amount_minor": 4_200_123, "currency": "KWD", "counterparty": "Quay <i>Hold</i> BV"},
    ),
    "b": ("maker", {"amount_minor": 987_654_321, "currency": "JPY", "counterparty": "Kiosk Oy"}),
    "c": ("lead", {"amount_minor": 1_005, "currency": "EUR", "counterparty": "Late & Co"}),
    "d": ("maker", {"amount_minor": 10**18, "currency": "CLF", "counterparty": "Max <b>CLF</b>"}),
    "e": ("maker", {"amount_minor": 7, "currency": "KWD", "counterparty": "Tiny KWD"}),
    "f": ("lead", {"amount_minor": 250, "currency": "USD", "counterparty": "Down & Out"}),
}
FILTERS = (
    ("currency", "currency=CLF"),
    ("status", "status=refunded"),
    ("dst", "day=2026-03-29"),
    ("after-dst", "day=2026-03-30"),
    ("combined", "currency=EUR&status=settled"),
    ("day-currency", "day=2026-04-11&currency=JPY"),
)


@dataclass
class Evidence:
    dataset: Any
    evidence_dir: Any
    readme: str = ""
    confinement: str = ""
    healthy: bool = False
    health_detail: str = ""
    notifier_healthy: bool = False
    notifier_detail: str = ""
    first_health: Any = None
    notifier_health: Any = None
    boot_s: float | None = None
    health_during_sync: Any = None
    latency_sync: list[float] = field(default_factory=list)
    killed_mid_sync: bool = False
    respawn_error: str | None = None
    status: Any = None
    listing: list[dict[str, Any]] | None = None
    listing_text: str = ""
    listing_pages: list[dict[str, Any]] | None = None  # the API's just before the console's pages
    paged: list[dict[str, Any]] | None = None
    paged_total: Any = None
    filters: dict[str, list[str] | None] = field(default_factory=dict)
    filter_totals: dict[str, Any] = field(default_factory=dict)  # each filter's ``total``
    summary: Any = None
    bad_queries: dict[str, int | None] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    edits: dict[str, Any] = field(default_factory=dict)
    resync: Call | None = None
    resync_again: Call | None = None
    resync_status: Any = None
    after_resync: dict[str, Any] = field(default_factory=dict)
    calls: dict[str, Call] = field(default_factory=dict)
    drafts_after_bad: Any = None
    drafts: dict[str, str] = field(default_factory=dict)
    draft_states: dict[str, Any] = field(default_factory=dict)
    browser: dict[str, Any] = field(default_factory=dict)
    held_create: bool = False
    approval_kill_error: str | None = None
    partition: dict[str, Any] = field(default_factory=dict)
    notifier_kill: dict[str, Any] = field(default_factory=dict)
    before_cold: dict[str, Any] = field(default_factory=dict)
    cold: dict[str, Any] = field(default_factory=dict)
    events: list[dict[str, Any]] | None = None
    notifications: list[dict[str, Any]] | None = None
    sqlite_files: list[str] = field(default_factory=list)
    other_files: list[str] = field(default_factory=list)  # in a --db-dir, not SQLite's
    unsigned_hook: list[Any] = field(default_factory=list)  # [payment id, version it claimed]
    trace: list[dict[str, Any]] = field(default_factory=list)
    relay_trace: list[dict[str, Any]] = field(default_factory=list)
    creations: list[dict[str, Any]] = field(default_factory=list)
    extra_truth: dict[str, tuple[str, int]] = field(default_factory=dict)
    truth_at: dict[str, dict[str, tuple[str, int]]] = field(default_factory=dict)
    probe_error: str | None = None
    timings: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def pages(self, *phases: str) -> list[dict[str, Any]]:
        return [r for r in self.trace if r.get("kind") == "page" and r["phase"] in phases]

    def walk(self) -> list[dict[str, Any]]:
        return self.pages("initial-sync", "after-respawn")


def walk_listing(
    app: AppProcess, query: str, per_page: int
) -> tuple[list[dict[str, Any]] | None, Any]:
    items: list[dict[str, Any]] = []
    total = None
    for page in range(1, 20000 // per_page + 3):
        sep = "&" if query else ""
        got = get(app.url(f"/api/payments?{query}{sep}per_page={per_page}&page={page}"), timeout=15)
        data = got.json()
        if not got.ok or not isinstance(data, dict) or not isinstance(data.get("items"), list):
            return (items or None), total
        total = data.get("total")
        items.extend(i for i in data["items"] if isinstance(i, dict))
        if not data["items"] or (isinstance(total, int) and len(items) >= total):
            break
    return items, total


def jget(app: AppProcess, path: str) -> Any:
    return get(app.url(path), timeout=10.0).json()


def status(app: AppProcess) -> Any:
    st = jget(app, "/api/status")
    return st if isinstance(st, dict) else None


def synced(app: AppProcess) -> bool:
    st = status(app)
    return bool(st) and st.get("sync") in ("done", "failed")


def load(app: AppProcess, n: int = 40) -> list[float]:
    paths = [f"/api/payments?per_page=100&page={1 + i * 7 % 120}" for i in range(n // 2)]
    paths += ["/api/summary"] * (n - len(paths))
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


def events_of(app: AppProcess) -> list[dict[str, Any]] | None:
    out: list[dict[str, Any]] = []
    after = 0
    for _ in range(200):
        data = jget(app, f"/api/events?after={after}&limit=500")
        if not isinstance(data, dict) or not isinstance(data.get("items"), list):
            return out or None
        items = [i for i in data["items"] if isinstance(i, dict)]
        if not items:
            break
        out.extend(items)
        after = items[-1].get("seq") if isinstance(items[-1].get("seq"), int) else after + 500  # type: ignore[assignment]
    return out


def notes_of(notifier: AppProcess) -> list[dict[str, Any]] | None:
    out: list[dict[str, Any]] = []
    after = 0
    for _ in range(200):
        data = jget(notifier, f"/api/notifications?after={after}&limit=500")
        if not isinstance(data, dict) or not isinstance(data.get("items"), list):
            return out or None
        items = [i for i in data["items"] if isinstance(i, dict)]
        if not items:
            break
        out.extend(items)
        after = items[-1].get("seq") if isinstance(items[-1].get("seq"), int) else after + 500  # type: ignore[assignment]
    return out


def last_seq(app: AppProcess, path: str) -> int | None:
    data = jget(app, path)
    value = data.get("last_seq") if isinstance(data, dict) else None
    return value if isinstance(value, int) else None


def caught_up(ledger: AppProcess, notifier: AppProcess) -> bool:
    want = last_seq(ledger, "/api/events?after=0&limit=1")
    have = last_seq(notifier, "/api/status")
    return want is not None and have == want


def kill(app: AppProcess) -> None:
    app.kill_group(signal.SIGKILL)


def respawn(app: AppProcess) -> tuple[bool, float, str]:
    t = time.monotonic()
    try:
        app.respawn()
    except AppNotHealthy as exc:
        return False, time.monotonic() - t, f"{exc}; {exc.log_tail[-200:]}"
    return True, time.monotonic() - t, ""


def poll_true(probe: Any, budget: float, interval: float = 0.1) -> float | None:
    """Seconds until ``probe()`` held, None when it never did within ``budget``."""
    start = time.monotonic()
    if poll(probe, budget, interval):
        return time.monotonic() - start
    return None
