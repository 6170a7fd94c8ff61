"""The seeded payments vendor of apps/meridian-ledger: fixtures, faults, webhooks.

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

This module derives them (``build_dataset``); ``vendor_model`` holds the numbers and
the records, ``vendor`` serves them.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from harness.appkit.seeding import between, derive_bytes, rng

from .vendor_model import (
    _NAMES,
    _SUFFIXES,
    BERLIN,
    DAYS,
    FIRST_DAY,
    MARKUP_NAMES,
    PAGE_SIZE,
    PAGES,
    WINDOW_OFFSETS,
    Dataset,
    Event,
    Faults,
    Payment,
)


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
