"""Seeded invoice fixtures and fault positions for the paginated mock dependency.

Frozen structure: ``count`` invoices in pages of ``page_size``; every currency of
``CURRENCIES`` appears (exponents 0, 2 and 3); one page answers 503 once, one earlier
page is slow once, and the last invoice of one page is repeated at the start of the
next. Moving positions: ids, names, amounts, currency order, the count and which pages
carry the faults all derive from the seed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.scoring.appkit.seeding import between, derive_bytes, rng

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

    slow_page: int
    unavailable_page: int
    duplicate_page: int  # its last invoice is repeated first on the next page


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


def build_dataset(seed: str, page_size: int = 10, low: int = 37, high: int = 53) -> Dataset:
    """Derive the invoices, pages, cursors and fault positions from ``seed``."""
    count = between(seed, "invoices:count", low, high)
    order = list(CURRENCIES)
    rng(seed, "invoices:currency-order").shuffle(order)
    invoices = []
    for i in range(count):
        r = rng(seed, f"invoice:{i}")
        name = f"{r.choice(_NAMES)} {r.choice(_SUFFIXES)}"
        amount = r.randint(1, 10 ** r.randint(1, 7))
        ident = "inv_" + derive_bytes(seed, f"invoice-id:{i}").hex()[:12]
        invoices.append(Invoice(ident, name, order[i % len(order)][0], amount))
    chunks = [list(invoices[i : i + page_size]) for i in range(0, count, page_size)]
    n = len(chunks)
    if n < 4:
        raise ValueError(f"need at least 4 pages for the fault structure, got {n}")
    slow = between(seed, "fault:slow-page", 1, n - 2)
    faults = Faults(
        slow_page=slow,
        unavailable_page=between(seed, "fault:503-page", slow + 1, n - 1),
        duplicate_page=between(seed, "fault:duplicate-page", 0, n - 2),
    )
    chunks[faults.duplicate_page + 1].insert(0, chunks[faults.duplicate_page][-1])
    cursors = [None] + ["c" + derive_bytes(seed, f"cursor:{i}").hex()[:16] for i in range(1, n)]
    return Dataset(tuple(invoices), tuple(tuple(c) for c in chunks), tuple(cursors), faults)
