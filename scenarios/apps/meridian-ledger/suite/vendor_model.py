"""The vendor's frozen structure and records (apps/meridian-ledger).

Frozen structure: 1,536 payments served as 24 pages of 64 in the vendor's own order,
behind opaque cursors; currencies EUR, USD, JPY, KWD (exponents 2, 2, 0, 3); creation
times over 40 Europe/Berlin days (2026-03-10 .. 2026-04-18, one DST change on 03-29).
Fault sizes at the SPEC's bounds (``Retry-After: 2``, five 500s in a row, a page answered
after 4.6 s) and the 300 s webhook window. Here too: amounts in minor units as decimal
strings, Berlin days and minutes, and the records (``Payment``, ``Event``, ``Faults``,
``Dataset``); ``vendor_fixtures`` derives them from the seed, ``vendor`` serves them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any
from zoneinfo import ZoneInfo

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
