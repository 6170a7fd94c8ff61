"""The seeded payments vendor of apps/meridian-ledger: the mock HTTP server.

It serves the dataset ``vendor_fixtures`` derives from the seed (pages behind cursors, with
ETags, and their faults), takes payment creations with idempotency keys, POSTs the signed
webhooks due around each page to the app, and can hold a page or a creation (the scorer
SIGKILLs the app while it waits) or go offline.

The mock runs in the scorer's process and writes its JSONL trace (``seq``, ``t_ms``
monotonic ms since start, ``phase``) where the confined app cannot reach it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from harness.appkit.seeding import derive_bytes

from .vendor_fixtures import build_dataset
from .vendor_model import (
    ERROR_REPEATS,
    PAGE_SIZE,
    PAGES,
    PAYMENTS,
    RETRY_AFTER,
    SLOW_DELAY,
    Payment,
)


def sign(secret: str, timestamp: str, body: bytes) -> str:
    mac = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    return "v1=" + mac.hexdigest()


class Vendor:
    """The mock vendor: ``with Vendor(seed, trace) as v``; ``v.url`` for the app."""

    def __init__(self, seed: str, trace: Path, *, hold_max: float = 8.0) -> None:
        self.seed = seed
        self.dataset = build_dataset(seed)
        self.trace = Path(trace)
        self.hold_max = hold_max
        self.app_url: Callable[[], str | None] = lambda: None
        self.kill_point = threading.Event()  # the held page was asked for
        self.held_since: float | None = None  # monotonic: when the held page was asked
        self.held_until: float | None = None  # monotonic: when its answer left (or failed)
        self.create_point = threading.Event()  # a held payment creation arrived
        self._release = threading.Event()
        self._release_create = threading.Event()
        self._hold_create = False
        self._lock = threading.Lock()
        self._seq = 0
        self._t0 = time.monotonic()
        self._phase = "initial-sync"
        self._offline = False
        self._inflight = 0
        self._delayed = 0
        self._first: set[tuple[str, int]] = set()  # (fault, page) already served
        self._counts: dict[tuple[str, int], int] = {}  # (fault, page) -> requests seen
        self.state = {p.id: p for p in (Payment(**vars(q)) for q in self.dataset.payments)}
        self.order = [p.id for p in self.dataset.payments]
        self.created: dict[str, dict[str, Any]] = {}  # Idempotency-Key -> payment
        self.creations: list[dict[str, Any]] = []  # every POST, in order
        self.served_etags: dict[int, str] = {}  # page -> last ETag served with a 200
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------
    def __enter__(self) -> Vendor:
        self.trace.parent.mkdir(parents=True, exist_ok=True)
        self.trace.write_bytes(b"")
        self._t0 = time.monotonic()
        handler = type("Handler", (_Handler,), {"vendor": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._release.set()
        self._release_create.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join()

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    # -- control -----------------------------------------------------------------------
    def mark_phase(self, phase: str) -> None:
        with self._lock:
            self._phase = phase
            self._write({"kind": "mark", "phase": phase})

    def set_offline(self, offline: bool) -> None:
        with self._lock:
            self._offline = offline

    def release(self) -> None:
        self._release.set()

    def hold_next_create(self) -> None:
        with self._lock:
            self._hold_create = True
            self.create_point.clear()
            self._release_create.clear()

    def release_create(self) -> None:
        self._release_create.set()

    def records(self) -> list[dict[str, Any]]:
        with self._lock:
            text = self.trace.read_text(encoding="utf-8")
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def page_etag(self, body: list[dict[str, Any]]) -> str:
        digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
        return f'"{digest[:20]}"'

    def current_page(self, page: int) -> list[dict[str, Any]]:
        ids = self.order[page * PAGE_SIZE : (page + 1) * PAGE_SIZE]
        return [self.state[i].as_json() for i in ids]

    # -- internals ---------------------------------------------------------------------
    def _write(self, record: dict[str, Any]) -> None:
        self._seq += 1
        t_ms = round((time.monotonic() - self._t0) * 1000.0, 1)
        line = json.dumps({"seq": self._seq, "t_ms": t_ms, **record}, sort_keys=True)
        with self.trace.open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")

    def _once(self, fault: str, page: int) -> bool:
        if (fault, page) in self._first:
            return False
        self._first.add((fault, page))
        return True

    def _count(self, fault: str, page: int) -> int:
        """How many times ``fault`` was asked for on ``page``, this time included."""
        key = (fault, page)
        self._counts[key] = self._counts.get(key, 0) + 1
        return self._counts[key]

    def deliver(self, when: tuple[str, int]) -> None:
        """POST the webhooks due at ``when`` to the app, one by one, and record each."""
        for ev in self.dataset.events:
            if ev.when != when:
                continue
            with self._lock:
                if not self._once("event:" + ev.id, 0):
                    continue
                if ev.valid:
                    p = self.state[ev.payment_id]
                    if ev.version > p.version:
                        p.status, p.version = ev.status, ev.version
            base = self.app_url()
            body = ev.body()
            stamp = str(int(time.time()) + ev.offset)
            secret = self.dataset.tokens["webhook_secret"]
            sig = sign(secret if ev.signed else secret + "x", stamp, body)
            status: int | None = None
            if base:
                req = urllib.request.Request(
                    base + "/webhooks/vendor",
                    data=body,
                    method="POST",
                    headers={
                        "Content-Type": "application/json",
                        "X-Vendor-Timestamp": stamp,
                        "X-Vendor-Signature": sig,
                    },
                )
                try:
                    with urllib.request.urlopen(req, timeout=5.0) as resp:
                        status = int(resp.status)
                except urllib.error.HTTPError as exc:
                    status = exc.code
                except (urllib.error.URLError, OSError):
                    status = None
            with self._lock:
                self._write(
                    {
                        "kind": "webhook",
                        "phase": self._phase,
                        "event": ev.id,
                        "payment": ev.payment_id,
                        "version": ev.version,
                        "signed": ev.signed,
                        "offset": ev.offset,
                        "when": list(ev.when),
                        "app_status": status,
                    }
                )

    def decide_get(self, raw: str, headers: Any) -> tuple[int, Any, float, dict[str, str]]:
        split = urlsplit(raw)
        cursor = parse_qs(split.query).get("cursor", [None])[0] or None
        page = self.dataset.page_of(cursor) if split.path == PAYMENTS else None
        auth = headers.get("Authorization") == f"Bearer {self.dataset.tokens['vendor_api_key']}"
        inm = headers.get("If-None-Match")
        f = self.dataset.faults
        status, fault, delay = 200, None, 0.0
        body: Any = None
        out_headers: dict[str, str] = {}
        pre: tuple[str, int] | None = None
        fresh = page is not None and (f"after:{page - 1}", 0) not in self._first
        if fresh and page and page - 1 in f.after_pages:
            pre = ("after", page - 1)
        if pre is not None:
            with self._lock:
                self._first.add((f"after:{pre[1]}", 0))
            self.deliver(pre)
        with self._lock:
            inflight = self._inflight - self._delayed
            self._inflight += 1
            if split.path != PAYMENTS:
                status, fault = 404, "not-found"
            elif self._offline:
                status, fault = 503, "offline"
            elif not auth:
                status, fault = 401, "unauthorized"
            elif page is None:
                status, fault = 400, "bad-cursor"
            elif page == f.drop_page and self._once("drop", page):
                status, fault = 0, "drop"
            elif page == f.rate_page and self._once("429", page):
                status, fault = 429, "rate-limited"
                out_headers["Retry-After"] = str(RETRY_AFTER)
            elif page == f.error_page and self._count("500", page) <= ERROR_REPEATS:
                status, fault = 500, "server-error"
            else:
                if page == f.kill_page and self._once("hold", page):
                    delay, fault = -1.0, "hold"
                elif page == f.slow_page and self._once("slow", page):
                    delay, fault = SLOW_DELAY, "slow"
                body = self.current_page(page)
        # webhooks racing the body: the page was read before the event changed it
        if body is not None and page in f.before_pages and self._once("before", page):
            self.deliver(("before", page))
        with self._lock:
            etag = None
            if body is not None:
                etag = self.page_etag(body)
                out_headers["ETag"] = etag
                if inm is not None and inm == etag:
                    status, fault = 304, fault or "not-modified"
                else:
                    self.served_etags[page] = etag  # type: ignore[index]
                nxt = self.dataset.cursors[page + 1] if page + 1 < PAGES else None  # type: ignore[operator]
                body = {"data": body, "next_cursor": nxt}
            self._write(
                {
                    "kind": "page",
                    "phase": self._phase,
                    "cursor": cursor,
                    "page": page,
                    "status": status,
                    "fault": fault,
                    "auth": auth,
                    "inm": inm,
                    "etag": etag,
                    "inflight": inflight,
                }
            )
            if delay < 0:  # a held request stays pending past its client's death
                self._delayed += 1
            if delay < 0:
                self.held_since = time.monotonic()
                self.kill_point.set()
        if status not in (200, 304, 0):
            body = {"error": fault}
        return status, body, delay, out_headers

    def decide_post(self, raw: str, headers: Any, data: bytes) -> tuple[int, Any, float]:
        key = headers.get("Idempotency-Key")
        auth = headers.get("Authorization") == f"Bearer {self.dataset.tokens['vendor_api_key']}"
        try:
            payload = json.loads(data or b"null")
        except ValueError:
            payload = None
        delay = 0.0
        with self._lock:
            status: int
            body: Any
            if urlsplit(raw).path != PAYMENTS:
                status, body = 404, {"error": "not-found"}
            elif self._offline:
                status, body = 503, {"error": "offline"}
            elif not auth:
                status, body = 401, {"error": "unauthorized"}
            elif not key:
                status, body = 400, {"error": "Idempotency-Key required"}
            elif not isinstance(payload, dict):
                status, body = 400, {"error": "JSON object required"}
            elif key in self.created:
                status, body = 200, self.created[key]
            else:
                n = len(self.created) + 1
                body = {
                    "id": "pay_n" + derive_bytes(self.seed, f"ledger:created:{n}").hex()[:11],
                    "amount_minor": payload.get("amount_minor"),
                    "currency": payload.get("currency"),
                    "counterparty": payload.get("counterparty"),
                    "reference": payload.get("reference"),
                    "status": "pending",
                    "version": 1,
                }
                self.created[key] = body
                status = 201
                if self._hold_create:
                    self._hold_create = False
                    delay = -1.0
                    self.create_point.set()
            record = {
                "kind": "create",
                "phase": self._phase,
                "status": status,
                "key": key,
                "auth": auth,
                "reference": payload.get("reference") if isinstance(payload, dict) else None,
                "payment": body.get("id") if isinstance(body, dict) else None,
                "held": delay < 0,
            }
            self.creations.append(record)
            self._write(record)
        return status, body, delay

    def done(self, delayed: bool) -> None:
        with self._lock:
            self._inflight -= 1
            self._delayed -= int(delayed)
            if delayed and self.held_until is None:
                self.held_until = time.monotonic()


class _Handler(BaseHTTPRequestHandler):
    vendor: Vendor
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        status, body, delay, headers = self.vendor.decide_get(self.path, self.headers)
        finished = False
        try:
            if status == 0:  # dropped connection: no answer at all
                self.close_connection = True
                return
            if delay < 0:
                self.vendor._release.wait(self.vendor.hold_max)
            elif delay > 0:
                time.sleep(delay)
            # no longer in flight once the answer leaves: the client may ask again at once
            self.vendor.done(delay < 0)
            finished = True
            self._send(status, body if status != 304 else None, headers)
        except OSError:
            pass
        finally:
            if not finished:
                self.vendor.done(delay < 0)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        data = self.rfile.read(length) if length else b""
        status, body, delay = self.vendor.decide_post(self.path, self.headers, data)
        try:
            if delay < 0:
                self.vendor._release_create.wait(self.vendor.hold_max)
            self._send(status, body, {})
        except OSError:
            pass

    def _send(self, status: int, body: Any, headers: dict[str, str]) -> None:
        payload = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        if body is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        if payload:
            self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: the trace is the record."""
