"""What one execution of the app leaves for the checks: the evidence and its readers."""

import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.appkit.browser import PageProbe
from harness.appkit.fetch import Fetched
from harness.appkit.fixtures import (
    Dataset,
)
from harness.appkit.grading import (
    probe_rows,
)
from harness.appkit.mockdep import RESOURCE
from harness.scoring import Outcome, absent

from .schedule import BACKOFF_PLAIN, SLOW_RANGES

STATES = ("syncing", "done")  # "failed" only when the sync stops for good: never here


LIVES = (
    "initial-sync",
    "after-respawn",
    "after-write-kill",
)  # the phases the app syncs in


@dataclass
class WatchLog:
    """What the health watch saw while the kill page was held."""

    answered: int = 0  # asks answered 200 {"status": "ok"}
    refused: int = 0  # asks no server took (not listening yet: M-RUN-1's 10 s, not charged)
    stalls: list[str] = field(default_factory=list)  # asks unanswered within HEALTH_PROMPT_S


@dataclass
class Sample:
    """One answer of GET /api/status: when it was asked (mock clock, ms), in which phase."""

    t_ms: float
    phase: str
    status: int | None
    body: Any
    rtt_s: float = 0.0  # how long the answer took: the app's latency at that moment


@dataclass
class UiSample:
    """The page's rows read mid-sync (while the app waits on the backoff page), between
    two reads of ``/api/invoices``."""

    before: list[str]
    rows: list[str]
    after: list[str]
    error: str | None = None


@dataclass
class Evidence:
    """Everything one execution of the app produced, for the checks to grade."""

    dataset: Dataset
    evidence_dir: Path
    backoff_run: int = BACKOFF_PLAIN + 2
    retry_afters: dict[int, int] = field(default_factory=dict)  # backoff run position: s
    slow_s: float = SLOW_RANGES[0][0]  # the slow page's 200 (its retry)
    slow_503_s: float = SLOW_RANGES[0][0]  # the slow page's first ask's 503
    write_kill_page: int = 0
    confinement: str = ""
    healthy: bool = False
    health_detail: str = ""
    health_during_sync: Fetched | None = None
    health_watch: WatchLog | None = None
    resume_from: tuple[int, ...] = ()
    killed_mid_sync: bool = False
    respawn_error: str | None = None
    write_killed: bool = False  # the second SIGKILL came at a file write
    write_kill_detail: str = ""
    survived_write_kill: Fetched | None = None  # /api/invoices right after that restart
    stalled: str | None = None  # a wait that saw no upstream request in a whole budget
    status: Any = None
    status_after_restart: Any = None
    samples: list[Sample] = field(default_factory=list)
    health_samples: list[Sample] = field(default_factory=list)  # GET /health, every life
    listing: Fetched | None = None
    page: Fetched | None = None
    probe: PageProbe | None = None
    probe_error: str | None = None
    empty_look: bool = False  # the page was loaded at the first start, its table empty
    restore_error: str | None = None
    restored: Fetched | None = None
    ui_during_sync: UiSample | None = None
    listeners: list[list[str]] = field(default_factory=list)  # per start: the port's
    #: each start-up SIGKILL (right after its nth file write): where, and /api/invoices
    #: after the plain restart that followed it
    startup_kills: list[tuple[str, Fetched]] = field(default_factory=list)
    #: /api/status read once after each of those restarts (the invoices all served)
    startup_kill_states: list[Any] = field(default_factory=list)
    startup_kill_detail: str = ""
    startup_kill_error: str | None = None
    shown: list[tuple[str | None, int, str, int]] = field(default_factory=list)
    shapes: set[str] = field(default_factory=set)  # "tables=N,bodies=M" while rows showed
    structure: dict[str, int] = field(default_factory=dict)  # tables, bodies at the end
    fresh_dir_status: Any = None  # /api/status after --data was replaced by an empty folder
    fresh_dir_error: str | None = None
    data_files: list[str] = field(default_factory=list)
    sqlite_files: list[str] = field(default_factory=list)
    trace: list[dict[str, Any]] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)

    def invoices(self, fetched: Fetched | None) -> list[dict[str, Any]] | None:
        """The JSON invoice list of a fetch, or None when it is not one."""
        data = fetched.json() if fetched is not None and fetched.ok else None
        if not isinstance(data, list) or not all(isinstance(i, dict) for i in data):
            return None
        return data

    def ids(self, fetched: Fetched | None) -> list[str]:
        return [str(i.get("id")) for i in self.invoices(fetched) or []]

    def requests(self, phase: str | None = None) -> list[dict[str, Any]]:
        return [
            r
            for r in self.trace
            if r.get("path") == RESOURCE and (phase is None or r["phase"] == phase)
        ]

    def left_at(self) -> dict[int, float]:
        """When each 503's answer left the mock (trace ms), by the ask's seq."""
        return {r["answer_to"]: r["t_ms"] for r in self.trace if r.get("mark") == "answered"}

    def pauses(self, asks: list[dict[str, Any]]) -> list[float]:
        """Seconds from each answer leaving (the ask, when no answer left: a reset, a
        client that gave up) to the next ask, up to the first 200: what a client paused,
        plus its latency, never less (``gaps`` judged from the ask, which a slow 503
        made long)."""
        left = self.left_at()
        out: list[float] = []
        for prev, nxt in itertools.pairwise(asks):
            if prev.get("status") == 200:
                break
            since = left.get(prev["seq"], prev["t_ms"])
            if since > nxt["t_ms"]:  # asked again before the answer came: M-SYNC-8's
                since = prev["t_ms"]
            out.append((nxt["t_ms"] - since) / 1000.0)
        return out

    def page_requests(self, page: int) -> list[dict[str, Any]]:
        return [r for r in self.requests() if r.get("page") == page and r["phase"] in LIVES]


def lives_of(ev: Evidence, page: int) -> list[list[dict[str, Any]]]:
    """The asks of ``page``, one list per life of the app (a SIGKILL ends one)."""
    asks = ev.page_requests(page)
    lives = [[r for r in asks if r["phase"] == p] for p in LIVES]
    return [life for life in lives if life]


def life_of(phase: str) -> str:
    """The life of the app a trace or sample phase belongs to."""
    return "after-write-kill" if phase == "write-kill-down" else phase


def page_rows(ev: Evidence) -> tuple[list[dict[str, Any]] | None, Outcome]:
    """The browser's rows, or why there are none: the app's fault when a restart failed
    before the page was looked at (the run stops there), the harness's otherwise."""
    if ev.probe is None and ev.respawn_error:
        return None, absent(f"the page was never shown: restart failed: {ev.respawn_error}")
    return probe_rows(ev.probe, ev.probe_error)


def expected_rows(ev: Evidence) -> tuple[list[dict[str, Any]], Outcome | None]:
    """The page's rows of stored invoices (first occurrence each), or why there are none."""
    rows, why = page_rows(ev)
    if rows is None:
        return [], why
    expected = ev.dataset.by_id
    seen: set[str] = set()
    mine = []
    for r in rows:
        if r.get("id") in expected and r["id"] not in seen:
            seen.add(r["id"])
            mine.append(r)
    if not mine:
        return [], absent("no invoice row on the rendered page")
    return mine, None


def why(ev: Evidence, fetched: Fetched | None) -> str:
    if ev.respawn_error:
        return f"restart failed: {ev.respawn_error}"
    if fetched is None:
        return "not fetched"
    return fetched.error or f"HTTP {fetched.status}"
