"""The seeded payments of apps/meridian-console's vendor: fixtures, faults, webhooks.

Frozen structure: 12,288 payments served as 192 pages of 64 in the vendor's own order
behind opaque cursors; JPY, EUR, USD, KWD, CLF (exponents 0, 2, 2, 3, 4), each with at
least one amount above 2**53 and (but JPY) one negative amount above minus one unit;
64 Europe/Berlin days 2026-03-01 .. 2026-05-03 across the DST change of 03-29, a fifth
of the payments within two hours of Berlin midnight, 96 sharing a timestamp (a dozen
tied pairs both in CLF); six markup counterparties. Faults of the first walk, each once:
a held page (the SIGKILL point, pages 12-40), a dropped connection, a 429 with
``Retry-After: 2``, three 503 in a row on one page, a page answered after 5.5 s (the
SPEC's timeout is at least 7 s), an outage of 4 s (every connection reset). Webhooks in
classes (early, reordered, late, replayed, forged, stale, future, edge-of-window)
delivered in a seeded order when chosen pages are requested; failed deliveries are
retried at the next page. Between walks two pages change without a webhook (their ETags
change). Positions, ids, amounts, names, tokens and the delivery order derive from
the trial's secret seed (``appkit.seeding``). The server is ``vendor.py``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from functools import cached_property
from random import Random
from typing import Any

from harness.appkit.payments import BERLIN, EXPONENTS, money, sign_v1
from harness.appkit.payments import local_day as berlin_day
from harness.appkit.payments import local_minute as berlin_minute
from harness.appkit.seeding import between, derive_bytes, rng

__all__ = ["BERLIN", "EXPONENTS", "berlin_day", "berlin_minute", "money", "sign"]
CURRENCIES = ("JPY", "EUR", "USD", "KWD", "CLF")
STATUSES = ("pending", "settled", "failed", "refunded")
PAGES, PAGE_SIZE = 192, 64
COUNT = PAGES * PAGE_SIZE
DAYS, FIRST_DAY = 64, date(2026, 3, 1)
RETRY_AFTER_S = 2
SLOW_S = 5.5
#: the same page in the second walk answers later still, closer to the SPEC's 7 s (its
#: orientation names only the first walk's 5.5 s): a 6 s timeout re-asks it
RESYNC_SLOW_S = 6.5
OUTAGE_S = 4.0
ERRORS_IN_A_ROW = 3
WINDOW_S = 300
MARKUP_NAMES = (
    "<b>Bold</b> & Sons",
    "Tom & Jerry <Ltd>",
    'Quote "Q" <i>AG</i>',
    "A&amp;B Oy",
    "<script>alert(1)</script> KK",
    "Less < More > SpA",
)
_NAMES = ("Acme", "Globex", "Initech", "Hooli", "Stark", "Wayne", "Tyrell", "Wonka", "Müller")
_SUFFIXES = ("GmbH", "Ltd", "KK", "SA", "AG", "BV", "Oy", "SpA")


@dataclass
class Payment:
    id: str
    amount_minor: int
    currency: str
    status: str
    counterparty: str
    created_at: str
    version: int

    def as_json(self) -> dict[str, Any]:
        return dict(vars(self))

    @property
    def amount(self) -> str:
        return money(self.amount_minor, self.currency)

    @property
    def day(self) -> str:
        return berlin_day(self.created_at)


@dataclass(frozen=True)
class Event:
    """One webhook: delivered when page ``slot`` (0-based) is requested, in ``order``."""

    id: str
    payment_id: str
    status: str
    version: int
    kind: str  # early, reordered, late, replay, forged, stale, future, edge
    slot: int
    order: int

    @property
    def genuine(self) -> bool:
        """Signed by the vendor within the window: a correct app applies it."""
        return self.kind in ("early", "reordered", "late", "replay", "edge")

    def body(self) -> bytes:
        """Valid JSON in a layout no re-serialisation gives back (keys out of the usual
        order, one per line): a signature checked over ``json.dumps(json.loads(raw))``
        instead of the received bytes fails on every genuine event (M-HOOK-1)."""
        return json.dumps(
            {
                "type": "payment.updated",
                "version": self.version,
                "payment_id": self.payment_id,
                "event_id": self.id,
                "status": self.status,
            },
            indent=1,
        ).encode()


@dataclass(frozen=True)
class Faults:
    kill_page: int
    drop_page: int
    rate_page: int
    error_page: int
    slow_page: int
    outage_page: int
    resync_pages: tuple[int, int]


@dataclass
class Dataset:
    payments: list[Payment]  # initial vendor state, vendor order
    cursors: list[str | None]
    faults: Faults
    events: list[Event]
    tokens: dict[str, Any]
    truth: dict[str, tuple[str, int]] = field(default_factory=dict)  # after all events
    resync_changes: dict[str, tuple[str, int]] = field(default_factory=dict)

    def page(self, index: int) -> list[Payment]:
        return self.payments[index * PAGE_SIZE : (index + 1) * PAGE_SIZE]

    @cached_property
    def by_id(self) -> dict[str, Payment]:
        return {p.id: p for p in self.payments}

    @cached_property
    def _order(self) -> list[Payment]:
        return sorted(self.payments, key=lambda p: (p.created_at, p.id))

    def api_order(self) -> list[Payment]:
        return list(self._order)

    def final(self) -> dict[str, tuple[str, int]]:
        """(status, version) per payment after the walks and the resync changes."""
        return {**self.truth, **self.resync_changes}

    def user(self, role: str) -> dict[str, str]:
        return next(u for u in self.tokens["users"] if u["role"] == role)


def _created_at(r: Any, day: int, near_midnight: bool) -> str:
    if near_midnight:
        minute = r.choice([r.randrange(0, 120), r.randrange(22 * 60, 24 * 60)])
    else:
        minute = r.randrange(0, 24 * 60)
    local = datetime.combine(FIRST_DAY + timedelta(days=day), datetime.min.time(), BERLIN)
    local = local.replace(hour=minute // 60, minute=minute % 60, second=r.randrange(60))
    if local.date() == date(2026, 3, 29) and local.hour == 2:  # no such local time
        local = local.replace(hour=3)
    return local.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _amount(r: Random, currency: str) -> int:
    return r.randint(1, 10 ** r.randint(1, 9 if currency in ("JPY", "KWD", "CLF") else 8))


def build_dataset(seed: str) -> Dataset:
    """Derive every payment, cursor, fault and event from ``seed`` (frozen structure)."""
    special = list(range(COUNT))
    rng(seed, "console:special").shuffle(special)
    markup = dict(zip(special[:6], MARKUP_NAMES, strict=True))
    big = dict(zip(special[6:16], CURRENCIES * 2, strict=True))  # two above 2**53 each
    tiny = dict(zip(special[16:20], ("EUR", "USD", "KWD", "CLF"), strict=True))
    refunds = set(special[20:80])
    ties = set(special[80:176])
    payments: list[Payment] = []
    for i in range(COUNT):
        r = rng(seed, f"console:payment:{i}")
        currency = big.get(i) or tiny.get(i) or r.choice(CURRENCIES)
        status = r.choice(("pending", "settled", "settled", "failed"))
        if i in big:
            amount = 2**53 + 2 * r.randrange(1, 2**30) + 1
        elif i in tiny:
            amount = -r.randint(1, 10 ** EXPONENTS[currency] - 1)
            status = "refunded"
        else:
            amount = _amount(r, currency)
        if i in refunds:
            amount, status = -amount, "refunded"
        name = markup.get(i) or f"{r.choice(_NAMES)} {r.choice(_SUFFIXES)} {r.randrange(100)}"
        created = _created_at(r, r.randrange(DAYS), r.random() < 0.2)
        ident = "pay_" + derive_bytes(seed, f"console:id:{i}").hex()[:14]
        payments.append(Payment(ident, amount, currency, status, name, created, r.randint(1, 3)))
    for i in sorted(ties):
        if i > 0:
            payments[i].created_at = payments[i - 1].created_at
    # a dozen tied pairs both in CLF, so that a filtered listing meets ties too (M-API-5)
    plain = [i for i in sorted(ties) if i > 0 and not {i, i - 1} & (big.keys() | tiny.keys())]
    for i in plain[:12]:
        payments[i].currency = payments[i - 1].currency = "CLF"
    rng(seed, "console:vendor-order").shuffle(payments)
    cursors: list[str | None] = [None] + [
        "c_" + derive_bytes(seed, f"console:cursor:{i}").hex()[:22] for i in range(1, PAGES)
    ]
    kill = between(seed, "console:kill-page", 12, 40)
    later = list(range(kill + 8, PAGES - 8))
    rng(seed, "console:fault-pages").shuffle(later)
    faults = Faults(kill, later[0], later[1], later[2], later[3], later[4], (later[5], later[6]))
    users = [
        {"name": "mia", "role": "maker"},
        {"name": "carl", "role": "checker"},
        {"name": "lena", "role": "lead"},
        {"name": "omar", "role": "checker"},
    ]
    for u in users:
        u["token"] = "t_" + derive_bytes(seed, f"console:token:{u['name']}").hex()[:24]
    tokens = {
        "vendor_key": "vk_" + derive_bytes(seed, "console:vendor-key").hex()[:24],
        "webhook_secret": "whsec_" + derive_bytes(seed, "console:webhook").hex()[:32],
        "users": users,
    }
    events = _events(seed, payments, faults)
    ds = Dataset(payments, cursors, faults, events, tokens)
    truth = {p.id: (p.status, p.version) for p in payments}
    for ev in events:
        if ev.genuine and ev.version > truth[ev.payment_id][1]:
            truth[ev.payment_id] = (ev.status, ev.version)
    ds.truth = truth
    for page in faults.resync_pages:
        for j in rng(seed, f"console:resync:{page}").sample(range(PAGE_SIZE), 3):
            p = payments[page * PAGE_SIZE + j]
            status, version = truth[p.id]
            ds.resync_changes[p.id] = (_other(status, j), version + 1)
    return ds


def _other(status: str, salt: int) -> str:
    choices = [s for s in STATUSES if s != status]
    return choices[salt % len(choices)]


def _events(seed: str, payments: list[Payment], faults: Faults) -> list[Event]:
    r = rng(seed, "console:events")
    taken = {p.id for p in payments[faults.kill_page * PAGE_SIZE : (faults.kill_page + 1) * 64]}
    out: list[Event] = []

    def pick(lo: int, hi: int) -> tuple[int, Payment]:
        while True:
            index = r.randrange(lo * PAGE_SIZE, hi * PAGE_SIZE)
            if payments[index].id not in taken:
                taken.add(payments[index].id)
                return index // PAGE_SIZE, payments[index]

    def add(
        p: Payment, status: str, version: int, kind: str, slot: int, order: int | None = None
    ) -> Event:
        ev = Event(
            "evt_" + derive_bytes(seed, f"console:event:{len(out)}").hex()[:14],
            p.id,
            status,
            version,
            kind,
            slot,
            r.randrange(1000) if order is None else order,
        )
        out.append(ev)
        return ev

    for _ in range(6):  # before the page that holds the payment: the page is stale
        page, p = pick(faults.kill_page + 2, PAGES - 1)
        add(p, _other(p.status, 1), p.version + 1, "early", r.randrange(faults.kill_page + 1, page))
    for _ in range(4):  # a newer change delivered before an older one
        page, p = pick(1, PAGES - 4)
        slot = r.randrange(page + 1, PAGES - 1)
        new = add(p, _other(p.status, 2), p.version + 2, "reordered", slot)
        add(p, _other(new.status, 1), p.version + 1, "reordered", slot, new.order + 1)
    lates = []
    for _ in range(6):
        page, p = pick(1, PAGES - 4)
        lates.append(
            add(p, _other(p.status, 3), p.version + 1, "late", r.randrange(page + 1, PAGES))
        )
    for ev in lates[:2]:
        out.append(replace(ev, kind="replay", slot=min(PAGES - 1, ev.slot + 3), order=999))
    for kind in ("forged", "forged", "stale", "future", "edge"):
        page, p = pick(1, PAGES - 4)
        bump = 1 if kind == "edge" else 7
        add(p, _other(p.status, 0), p.version + bump, kind, r.randrange(page + 1, PAGES))
    return out


sign = sign_v1


def etag_of(page: list[Payment]) -> str:
    raw = json.dumps([(p.id, p.status, p.version) for p in page]).encode()
    return '"' + hashlib.sha256(raw).hexdigest()[:20] + '"'
