"""Seeded invoice fixtures and fault positions for the paginated mock dependency.

Frozen structure: ``count`` invoices in pages of ``page_size``; every currency of
``CURRENCIES`` appears (exponents 0, 2 and 3); adversarial values on every seed (every
markup name, amounts above 2**53 minor units, negative amounts, a credit note below one
major unit in each currency with decimals); one page held while the app is killed, one
page answered just under the SPEC's timeout, one page answering 503 as often as the
backoff bounds need, one answering 503 with a ``Retry-After`` above one second, and
three pages whose last invoice repeats on the next page. Moving
positions: ids, names, amounts, currency order, the count and which pages carry the
faults all derive from the seed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.appkit.seeding import between, derive_bytes, rng

#: ISO 4217 codes with their minor-unit exponents (digits after the decimal point).
CURRENCIES: tuple[tuple[str, int], ...] = (
    ("JPY", 0),
    ("KRW", 0),
    ("USD", 2),
    ("EUR", 2),
    ("GBP", 2),
    ("KWD", 3),
    ("BHD", 3),
    ("JOD", 3),
)
EXPONENTS: dict[str, int] = dict(CURRENCIES)
_NAMES = (
    "Acme",
    "Globex",
    "Initech",
    "Umbrella",
    "Hooli",
    "Stark",
    "Wayne",
    "Tyrell",
    "Cyberdyne",
    "Soylent",
    "Wonka",
    "Vandelay",
    "O'Brien & Sons",
    "Müller",
)
_SUFFIXES = ("Ltd", "GmbH", "KK", "LLC", "SA", "AG", "BV", "Oy")
#: Adversarial customer names: markup that only shows right when escaped.
MARKUP_NAMES = (
    "<b>Bold</b> & Sons",
    "Tom & Jerry <Ltd>",
    'Quote "Q" <i>Italic</i>',
    "A&amp;B Holdings",
    "Fish &copy Chips",  # one unescaped & shows as a copyright sign
)
#: Amounts above 2**53 minor units: exact only without floating point (JSON or JS).
BIG_AMOUNTS = (2**53 + 1, 2**55 + 7, 2**60 + 3, -(2**53 + 5))


def format_minor(amount_minor: int, exponent: int) -> str:
    """Minor units as a decimal string: (1234, 0) -> "1234", (1234, 3) -> "1.234"."""
    sign = "-" if amount_minor < 0 else ""
    value = abs(amount_minor)
    if exponent == 0:
        return f"{sign}{value}"
    whole, frac = divmod(value, 10**exponent)
    return f"{sign}{whole}.{frac:0{exponent}d}"


@dataclass(frozen=True)
class Invoice:
    """One upstream invoice; ``amount_minor`` is in the currency's minor units."""

    id: str
    customer: str
    currency: str
    amount_minor: int

    @property
    def display_amount(self) -> str:
        return format_minor(self.amount_minor, EXPONENTS[self.currency])

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "customer": self.customer,
            "currency": self.currency,
            "amount_minor": self.amount_minor,
        }


@dataclass(frozen=True)
class Faults:
    """Page indexes carrying faults (page 0 is the first, cursor-less page)."""

    kill_page: int  # held: the app is SIGKILLed while it waits for this page
    slow_page: int  # answered after ``SLOW_DELAY`` seconds, once
    backoff_page: int  # 503 ``BACKOFF_FAILURES`` times in a row, no Retry-After
    retry_after_page: int  # 503 once with ``Retry-After: RETRY_AFTER``
    duplicate_pages: tuple[int, ...]  # each one's last invoice is repeated on the next

    @property
    def unavailable_page(self) -> int:  # the 1.x name
        return self.backoff_page


#: Faults at the SPEC's bounds: the slow answer comes just under the 6 s the SPEC makes
#: a client wait; the backoff page answers 503 four times (the pauses must grow 1.5x
#: from 0.2 s each time); Retry-After asks for more than a second.
SLOW_DELAY = 5.6
BACKOFF_FAILURES = 4
RETRY_AFTER = 2


@dataclass(frozen=True)
class Dataset:
    """The expected invoices (unique) and how the mock serves them."""

    invoices: tuple[Invoice, ...]
    pages: tuple[tuple[Invoice, ...], ...]
    cursors: tuple[str | None, ...]  # cursors[i] requests pages[i]
    faults: Faults

    def page_of(self, cursor: str | None) -> int | None:
        """Index of the page a cursor requests, or None for an unknown cursor."""
        return self.cursors.index(cursor) if cursor in self.cursors else None

    def next_cursor(self, page: int) -> str | None:
        return self.cursors[page + 1] if page + 1 < len(self.cursors) else None

    @property
    def by_id(self) -> dict[str, Invoice]:
        return {inv.id: inv for inv in self.invoices}


def build_dataset(seed: str, page_size: int = 10, low: int = 55, high: int = 75) -> Dataset:
    """Derive the invoices, pages, cursors and fault positions from ``seed``.

    Frozen structure, on every seed: 6 to 8 pages; every currency; every markup name;
    the amounts above 2**53 (one negative); three negative amounts and, in every
    currency with decimals, a credit note below one major unit; one page of each fault;
    three overlaps. Moving positions: everything else, from the seed.
    """
    count = between(seed, "invoices:count", low, high)
    order = list(CURRENCIES)
    rng(seed, "invoices:currency-order").shuffle(order)
    special = list(range(count))
    rng(seed, "invoices:special").shuffle(special)
    markup = dict(zip(special[: len(MARKUP_NAMES)], MARKUP_NAMES, strict=True))
    rest = special[len(MARKUP_NAMES) :]
    big = dict(zip(rest[: len(BIG_AMOUNTS)], BIG_AMOUNTS, strict=True))
    rest = rest[len(BIG_AMOUNTS) :]
    negative = set(rest[:3])
    # a credit note below one major unit in every currency with decimals (-0.05, -0.007)
    tiny: dict[int, int] = {}
    for code, exp in CURRENCIES:
        if exp:
            i = next(i for i in rest[3:] if order[i % len(order)][0] == code)
            tiny[i] = -between(seed, f"invoices:tiny:{code}", 1, 10**exp - 1)
    invoices = []
    for i in range(count):
        r = rng(seed, f"invoice:{i}")
        name = markup.get(i) or f"{r.choice(_NAMES)} {r.choice(_SUFFIXES)}"
        amount = big.get(i) or tiny.get(i) or r.randint(1, 10 ** r.randint(1, 7))
        if i in negative:
            amount = -amount
        ident = "inv_" + derive_bytes(seed, f"invoice-id:{i}").hex()[:12]
        invoices.append(Invoice(ident, name, order[i % len(order)][0], amount))
    chunks = [list(invoices[i : i + page_size]) for i in range(0, count, page_size)]
    n = len(chunks)
    if n < 6:
        raise ValueError(f"need at least 6 pages for the fault structure, got {n}")
    kill = between(seed, "fault:kill-page", 1, 2)
    later = list(range(kill + 1, n))
    rng(seed, "fault:later-pages").shuffle(later)
    overlap = list(range(n - 1))
    rng(seed, "fault:duplicate-pages").shuffle(overlap)
    # the slow page comes last of the three, so an app that dies on it has already
    # shown how it handles 503s (no seed-dependent cascades)
    first, second, slow = sorted(later[:3])
    if between(seed, "fault:503-order", 0, 1):
        first, second = second, first
    faults = Faults(
        kill_page=kill,
        slow_page=slow,
        backoff_page=first,
        retry_after_page=second,
        duplicate_pages=tuple(sorted(overlap[:3])),
    )
    for page in reversed(faults.duplicate_pages):
        chunks[page + 1].insert(0, invoices[min((page + 1) * page_size, count) - 1])
    cursors = [None] + ["c" + derive_bytes(seed, f"cursor:{i}").hex()[:16] for i in range(1, n)]
    return Dataset(tuple(invoices), tuple(tuple(c) for c in chunks), tuple(cursors), faults)
