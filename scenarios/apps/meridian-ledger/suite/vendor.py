"""The seeded payments vendor of apps/meridian-ledger: fixtures, faults, webhooks, trace.

Frozen structure: 1,536 payments served as 24 pages of 64 in the vendor's own order,
behind opaque cursors; currencies EUR, USD, JPY, KWD (exponents 2, 2, 0, 3); creation
times over 40 Europe/Berlin days (2026-03-10 .. 2026-04-18, one DST change on 03-29),
a fifth of them around Berlin midnight and some sharing a timestamp; six amounts above
2**53; markup in four counterparty names. Faults at the SPEC's bounds: a page whose
first request is *held* (the scorer SIGKILLs the app while it waits), a dropped
connection, a 429 with ``Retry-After: 2`` (more than one second), five 500s in a row on
one page (the sixth attempt, the SPEC's least number, succeeds; the pauses test the
1.5x growth) and a page answered after 4.6 s (the SPEC asks for a timeout of at least
5 s). Webhooks race the sync: before the body of two pages (the body is a stale
snapshot), after two pages (a newer event, then a stale one), one with a bad signature
each, and around the 300 s timestamp window: one signed 290 s ago (inside: applied),
one 310 s ago (a replay outside the window: 401) and one 310 s ahead (401). Moving
positions: ids, times, amounts, names and which pages carry which fault or event all
derive from the per-trial secret seed
(``appkit.seeding``: HMAC of seed and label).

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
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit
from zoneinfo import ZoneInfo

from harness.appkit.seeding import between, derive_bytes, rng

BERLIN = ZoneInfo("Europe/Berlin")
EXPONENTS = {"EUR": 2, "USD": 2, "JPY": 0, "KWD": 3}
PAGES = 24
PAGE_SIZE = 64
DAYS = 40
FIRST_DAY = date(2026, 3, 10)
RETRY_AFTER = 2
SLOW_DELAY = 4.6  # SPEC: a per-request timeout of at least 5 s
ERROR_REPEATS = 5  # SPEC: at least 6 attempts; the sixth succeeds
WINDOW_S = 300
WINDOW_OFFSETS = (-290, -310, 310)  # inside, a stale replay, from the future
PAYMENTS = "/v1/payments"
MARKUP_NAMES = ("<b>Bold</b> & Sons", "Tom & Jerry <Ltd>", 'Quote "Q" <i>AG</i>', "A&amp;B Oy")
_NAMES = ("Acme", "Globex", "Initech", "Hooli", "Stark", "Wayne", "Tyrell", "Wonka", "Müller")
_SUFFIXES = ("GmbH", "Ltd", "KK", "SA", "AG", "BV", "Oy", "SpA")


def format_minor(amount: int, exponent: int) -> str:
    """Minor units as a plain decimal string: (123456, 2) -> "1234.56"."""
    sign = "-" if amount < 0 else ""
    whole, frac = divmod(abs(amount), 10**exponent) if exponent else (abs(amount), 0)
    return f"{sign}{whole}" + (f".{frac:0{exponent}d}" if exponent else "")


def berlin_day(created_at: str) -> str:
    when = datetime.strptime(created_at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    return when.astimezone(BERLIN).date().isoformat()


def berlin_minute(created_at: str) -> str:
    when = datetime.strptime(created_at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    return when.astimezone(BERLIN).strftime("%Y-%m-%d %H:%M")


@dataclass
class Payment:
    id: str
    amount_minor: int
    currency: str
    counterparty: str
    created_at: str
    status: str
    version: int

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "amount_minor": self.amount_minor,
            "currency": self.currency,
            "status": self.status,
            "counterparty": self.counterparty,
            "created_at": self.created_at,
            "version": self.version,
        }

    @property
    def amount(self) -> str:
        return format_minor(self.amount_minor, EXPONENTS[self.currency])

    @property
    def day(self) -> str:
        return berlin_day(self.created_at)


@dataclass(frozen=True)
class Event:
    """One webhook delivery: ``when`` is ("before", page) or ("after", page)."""

    id: str
    payment_id: str
    status: str
    version: int
    when: tuple[str, int]
    signed: bool = True
    offset: int = 0  # seconds added to the X-Vendor-Timestamp (the 300 s window)

    @property
    def valid(self) -> bool:
        """Signed and inside the timestamp window: the app must apply it."""
        return self.signed and abs(self.offset) <= WINDOW_S

    def body(self) -> bytes:
        return json.dumps(
            {
                "event_id": self.id,
                "type": "payment.updated",
                "payment_id": self.payment_id,
                "status": self.status,
                "version": self.version,
            },
            separators=(",", ":"),
        ).encode()


@dataclass(frozen=True)
class Faults:
    kill_page: int
    drop_page: int
    rate_page: int
    error_page: int
    slow_page: int
    before_pages: tuple[int, int]
    after_pages: tuple[int, int]


@dataclass
class Dataset:
    payments: list[Payment]  # initial vendor state, vendor (id) order
    cursors: list[str | None]
    faults: Faults
    events: list[Event]
    tokens: dict[str, Any]
    truth: dict[str, tuple[str, int]] = field(default_factory=dict)  # id -> final (status, v)

    def page(self, index: int) -> list[Payment]:
        return self.payments[index * PAGE_SIZE : (index + 1) * PAGE_SIZE]

    def page_of(self, cursor: str | None) -> int | None:
        return self.cursors.index(cursor) if cursor in self.cursors else None

    @property
    def by_id(self) -> dict[str, Payment]:
        return {p.id: p for p in self.payments}

    def api_order(self) -> list[Payment]:
        return sorted(self.payments, key=lambda p: (p.created_at, p.id))


def _created_at(r: Any, day: int, near_midnight: bool) -> str:
    if near_midnight:
        minute = r.choice([r.randrange(0, 120), r.randrange(23 * 60, 24 * 60)])
    else:
        minute = r.randrange(0, 24 * 60)
    local = datetime.combine(FIRST_DAY + timedelta(days=day), datetime.min.time(), BERLIN)
    local = local.replace(hour=minute // 60, minute=minute % 60, second=r.randrange(60))
    return local.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def build_dataset(seed: str) -> Dataset:
    """Derive every payment, cursor, fault and event from ``seed`` (frozen structure)."""
    count = PAGES * PAGE_SIZE
    special = list(range(count))
    rng(seed, "ledger:special").shuffle(special)
    markup = dict(zip(special[:4], MARKUP_NAMES, strict=True))
    big = set(special[4:10])
    ties = set(special[10:90])
    currencies = ("EUR", "USD", "JPY", "KWD")
    payments: list[Payment] = []
    for i in range(count):
        r = rng(seed, f"ledger:payment:{i}")
        currency = currencies[i % 4] if i < 8 else r.choice(currencies)
        if i in big:
            amount = 2**53 + 2 * r.randrange(1, 2**30) + 1
        elif currency == "JPY" or currency == "KWD":
            amount = r.randint(1, 10 ** r.randint(2, 9))
        else:
            amount = r.randint(1, 10 ** r.randint(1, 8))
        name = markup.get(i) or f"{r.choice(_NAMES)} {r.choice(_SUFFIXES)} {r.randrange(100)}"
        created = _created_at(r, r.randrange(DAYS), r.random() < 0.2)
        status = r.choice(("pending", "settled", "settled", "failed"))
        ident = "pay_" + derive_bytes(seed, f"ledger:id:{i}").hex()[:12]
        payments.append(Payment(ident, amount, currency, name, created, status, r.randint(1, 3)))
    for i in sorted(ties):  # share a timestamp with another payment
        if i > 0:
            payments[i].created_at = payments[i - 1].created_at
    rng(seed, "ledger:vendor-order").shuffle(payments)  # the vendor's own order
    cursors: list[str | None] = [None] + [
        "c_" + derive_bytes(seed, f"ledger:cursor:{i}").hex()[:20] for i in range(1, PAGES)
    ]
    kill = between(seed, "ledger:kill-page", 3, 6)
    later = list(range(kill + 1, PAGES - 1))
    rng(seed, "ledger:fault-pages").shuffle(later)
    faults = Faults(
        kill_page=kill,
        drop_page=later[0],
        rate_page=later[1],
        error_page=later[2],
        slow_page=later[3],
        before_pages=(later[4], later[5]),
        after_pages=(later[6], later[7]),
    )
    events = _events(seed, payments, faults)
    tokens = {
        "vendor_api_key": "vk_" + derive_bytes(seed, "ledger:vendor-key").hex()[:24],
        "webhook_secret": "whsec_" + derive_bytes(seed, "ledger:webhook").hex()[:32],
        "makers": ["mk_" + derive_bytes(seed, "ledger:maker").hex()[:20]],
        "checkers": ["ck_" + derive_bytes(seed, f"ledger:checker:{i}").hex()[:20] for i in (0, 1)],
    }
    ds = Dataset(payments, cursors, faults, events, tokens)
    truth = {p.id: (p.status, p.version) for p in payments}
    for ev in events:
        if ev.valid and ev.version > truth[ev.payment_id][1]:
            truth[ev.payment_id] = (ev.status, ev.version)
    ds.truth = truth
    return ds


def _other(status: str, salt: int) -> str:
    choices = [s for s in ("pending", "settled", "failed") if s != status]
    return choices[salt % 2]


def _events(seed: str, payments: list[Payment], faults: Faults) -> list[Event]:
    out: list[Event] = []
    n = 0

    def ident() -> str:
        nonlocal n
        n += 1
        return "evt_" + derive_bytes(seed, f"ledger:event:{n}").hex()[:12]

    for page in faults.before_pages:
        picks = rng(seed, f"ledger:before:{page}").sample(range(PAGE_SIZE), 2)
        for k, j in enumerate(picks):
            p = payments[page * PAGE_SIZE + j]
            out.append(Event(ident(), p.id, _other(p.status, k), p.version + 1, ("before", page)))
    for n_page, page in enumerate(faults.after_pages):
        picks = rng(seed, f"ledger:after:{page}").sample(range(PAGE_SIZE), 6)
        for k, j in enumerate(picks[:2]):
            p = payments[page * PAGE_SIZE + j]
            new = _other(p.status, k)
            out.append(Event(ident(), p.id, new, p.version + 2, ("after", page)))
            stale = _other(new, k + 1)  # an older change delivered late: must be ignored
            out.append(Event(ident(), p.id, stale, p.version + 1, ("after", page)))
        p = payments[page * PAGE_SIZE + picks[2]]
        forged = Event(ident(), p.id, _other(p.status, 1), p.version + 5, ("after", page), False)
        out.append(forged)
        if n_page:
            continue
        for k, offset in enumerate(WINDOW_OFFSETS):  # around the timestamp window
            p = payments[page * PAGE_SIZE + picks[3 + k]]
            out.append(
                Event(
                    ident(), p.id, _other(p.status, k), p.version + 3, ("after", page), True, offset
                )
            )
    return out


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
