"""The mock payments vendor of apps/meridian-console: pages, faults, webhooks, trace.

It serves the seeded dataset (``fixtures.py``: payments, cursors, faults, webhooks) with
the first walk's faults, delivers the webhooks and records each request. The mock runs
in the scorer's process and writes a JSONL trace (``seq``, ``t_ms``, ``phase``) where the
confined app cannot reach it: the trace is the evidence.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from harness.appkit.traced import TracedServer, reset, send_json

from .fixtures import (
    ERRORS_IN_A_ROW,
    OUTAGE_S,
    PAGE_SIZE,
    PAGES,
    RESYNC_SLOW_S,
    RETRY_AFTER_S,
    SLOW_S,
    Event,
    Payment,
    build_dataset,
    etag_of,
    sign,
)


class Vendor(TracedServer):
    """The mock vendor: ``with Vendor(seed, trace) as v``; ``v.url`` for the app."""

    def __init__(self, seed: str, trace: Path) -> None:
        super().__init__(trace, _Handler, phase="initial-sync")
        self.dataset = build_dataset(seed)
        self.app_url: Callable[[], str | None] = lambda: None
        self.kill_point = threading.Event()
        self.walk_started = threading.Event()  # the first page request, whatever its answer
        self.create_point = threading.Event()
        self._release = threading.Event()
        self._release_create = threading.Event()
        self._hold_create = False
        self._hook_lock = threading.Lock()
        self._offline = False
        self._outage_until = 0.0
        self._errors = 0
        self.snapshot = [Payment(**vars(p)) for p in self.dataset.payments]  # what pages show
        self.created: dict[str, dict[str, Any]] = {}
        self.creations: list[dict[str, Any]] = []
        self.pending_hooks: list[Event] = []
        self.delivered: set[int] = set()  # slots whose events were queued

    def stopping(self) -> None:
        self._release.set()
        self._release_create.set()

    # -- control -----------------------------------------------------------------------
    def set_offline(self, offline: bool) -> None:
        with self._lock:
            self._offline = offline

    def release(self) -> None:
        self._release.set()

    def hold_next_create(self) -> None:
        self._hold_create = True
        self._release_create.clear()
        self.create_point.clear()

    def release_create(self) -> None:
        self._release_create.set()

    def apply_resync_changes(self) -> None:
        """Between walks: payments of two pages change (no webhook, new ETags)."""
        with self._lock:
            by_id = {p.id: p for p in self.snapshot}
            for pid, (status, version) in self.dataset.resync_changes.items():
                by_id[pid].status, by_id[pid].version = status, version
            self._write({"kind": "resync-changes", "n": len(self.dataset.resync_changes)})

    # -- faults ------------------------------------------------------------------------
    def in_outage(self) -> bool:
        return self._offline or time.monotonic() < self._outage_until

    def start_outage(self) -> None:
        self._outage_until = time.monotonic() + OUTAGE_S

    # -- webhooks ----------------------------------------------------------------------
    def queue_hooks(self, slot: int) -> None:
        with self._lock:
            if slot in self.delivered or self._phase not in ("initial-sync", "after-respawn"):
                return
            self.delivered.add(slot)
            due = sorted((e for e in self.dataset.events if e.slot == slot), key=lambda e: e.order)
            self.pending_hooks.extend(due)

    def deliver_hooks(self) -> None:
        """Post every queued event; failed deliveries stay queued (retried later)."""
        with self._hook_lock:
            queue, self.pending_hooks = self.pending_hooks, []
            for i, ev in enumerate(queue):
                if not self._post(ev):
                    self.pending_hooks = queue[i:] + self.pending_hooks
                    return

    def _post(self, ev: Event) -> bool:
        base = self.app_url()
        if not base:
            return False
        now = int(time.time())
        ts = {"stale": now - 400, "future": now + 400, "edge": now - 290}.get(ev.kind, now)
        body = ev.body()
        secret = self.dataset.tokens["webhook_secret"]
        sig = sign("whsec_forged" if ev.kind == "forged" else secret, str(ts), body)
        req = urllib.request.Request(base + "/webhooks/vendor", data=body, method="POST")
        req.add_header("Content-Type", "application/json")
        req.add_header("X-Meridian-Timestamp", str(ts))
        req.add_header("X-Meridian-Signature", sig)
        start = time.monotonic()
        try:
            with urllib.request.urlopen(req, timeout=5.0) as resp:
                status: int | None = resp.status
        except urllib.error.HTTPError as exc:
            status = exc.code
        except (urllib.error.URLError, OSError):
            status = None
        self.record(
            kind="hook",
            event=ev.id,
            cls=ev.kind,
            payment=ev.payment_id,
            version=ev.version,
            answer=status,
            took_ms=round((time.monotonic() - start) * 1000, 1),
        )
        return status is not None

    def drain_hooks(self, budget: float = 10.0) -> None:
        """Deliver whatever is still queued (the app was dead when it was due)."""
        end = time.monotonic() + budget
        while self.pending_hooks and time.monotonic() < end:
            self.deliver_hooks()
            if self.pending_hooks:
                time.sleep(0.3)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    @property
    def vendor(self) -> Vendor:
        return self.server.owner  # type: ignore[attr-defined,no-any-return]

    def log_message(self, fmt: str, *args: Any) -> None:
        pass

    _counted = False

    def _leave(self) -> None:
        """Leave the in-flight count once, *before* the answer is written: a client may
        send its next request as soon as it has read this one."""
        if self._counted:
            self._counted = False
            self.vendor.leave()

    def _reply(self, status: int, body: Any = None, headers: dict[str, str] | None = None) -> None:
        self._leave()
        send_json(self, status, body, headers)

    def _reset(self) -> None:
        reset(self)

    def _auth(self) -> bool:
        key = self.vendor.dataset.tokens["vendor_key"]
        return self.headers.get("Authorization") == f"Bearer {key}"

    def do_GET(self) -> None:
        v = self.vendor
        url = urlsplit(self.path)
        qs = {k: vals[-1] for k, vals in parse_qs(url.query).items()}
        if url.path != "/v1/payments":
            self._reply(404, {"error": "not found"})
            return
        cursor = qs.get("cursor")
        ds = v.dataset
        page = ds.cursors.index(cursor) if cursor in ds.cursors else None
        inflight = v.enter()
        self._counted = True
        v.walk_started.set()
        base = {
            "kind": "page",
            "page": page,
            "cursor": cursor,
            "inflight": inflight,
            "auth": self._auth(),
            "inm": self.headers.get("If-None-Match"),
        }
        try:
            if v.in_outage():
                v.record(**base, status="reset", outage=True)
                self._reset()
                return
            if page is None or qs.get("limit") != "64" or not base["auth"]:
                v.record(**base, status=400 if base["auth"] else 401)
                self._reply(400 if base["auth"] else 401, {"error": "bad request"})
                return
            f = ds.faults
            if v._phase in ("initial-sync", "after-respawn"):
                if page == f.kill_page and v.first("kill", page):
                    v.record(**base, status="held")
                    v.kill_point.set()
                    v._release.wait(30.0)
                    self._reset()
                    return
                if page == f.outage_page and v.first("outage", page):
                    v.start_outage()
                    v.record(**base, status="reset", outage=True)
                    self._reset()
                    return
                if page == f.drop_page and v.first("drop", page):
                    v.record(**base, status="reset")
                    self._reset()
                    return
                if page == f.rate_page and v.first("rate", page):
                    v.record(**base, status=429)
                    self._reply(429, {"error": "slow down"}, {"Retry-After": str(RETRY_AFTER_S)})
                    return
                if page == f.error_page and v._errors < ERRORS_IN_A_ROW:
                    with v._lock:
                        v._errors += 1
                    v.record(**base, status=503)
                    self._reply(503, {"error": "unavailable"})
                    return
                v.queue_hooks(page)
                v.deliver_hooks()
                if page == f.slow_page and v.first("slow", page):
                    time.sleep(SLOW_S)
            elif v._phase == "resync" and page == f.slow_page and v.first("slow-resync", page):
                time.sleep(RESYNC_SLOW_S)
            rows = v.snapshot[page * PAGE_SIZE : (page + 1) * PAGE_SIZE]
            etag = etag_of(rows)
            if base["inm"] == etag:
                v.record(**base, status=304)
                self._reply(304, None, {"ETag": etag})
                return
            nxt = ds.cursors[page + 1] if page + 1 < PAGES else None
            v.record(**base, status=200, etag=etag)
            self._reply(
                200, {"data": [p.as_json() for p in rows], "next_cursor": nxt}, {"ETag": etag}
            )
        except OSError:
            v.record(**base, status="client-gone")
        finally:
            self._leave()

    def do_POST(self) -> None:
        v = self.vendor
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        key = self.headers.get("Idempotency-Key")
        base = {"kind": "create", "key": key, "auth": self._auth()}
        if v.in_outage():
            v.record(**base, status="reset")
            self._reset()
            return
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        if not isinstance(body, dict) or not key or not base["auth"]:
            v.record(**base, status=400)
            self._reply(400, {"error": "bad request"})
            return
        with v._lock:
            existing = v.created.get(key)
            if existing is None:
                pid = "pay_new_" + hashlib.sha256(key.encode()).hexdigest()[:12]
                existing = {
                    "id": pid,
                    "amount_minor": body.get("amount_minor"),
                    "currency": body.get("currency"),
                    "counterparty": body.get("counterparty"),
                    "reference": body.get("reference"),
                    "status": "pending",
                    "version": 1,
                }
                v.created[key] = existing
                v.creations.append({"key": key, **existing})
                status = 201
            else:
                status = 200
        v.record(**base, status=status, reference=body.get("reference"), payment=existing["id"])
        if v._hold_create:
            v._hold_create = False
            v.create_point.set()
            v._release_create.wait(15.0)
            self._reset()
            return
        self._reply(status, existing)
