"""The payments fixtures built from a seed: invoices, pages, cursors, fault positions
(appkit/fixtures.py)."""

from __future__ import annotations

import pytest

from harness.appkit.fixtures import (
    BIG_AMOUNTS,
    CURRENCIES,
    EXPONENTS,
    MARKUP_NAMES,
    Invoice,
    build_dataset,
    format_minor,
)

pytestmark = pytest.mark.unit

SEED_A = "a11ce5eedf00d123"
SEED_B = "0123456789abcdef"


def test_same_seed_rebuilds_identical_fixtures_and_faults() -> None:
    assert build_dataset(SEED_A) == build_dataset(SEED_A)


def test_other_seed_moves_fixtures_and_fault_positions() -> None:
    a, b = build_dataset(SEED_A), build_dataset(SEED_B)
    assert {i.id for i in a.invoices}.isdisjoint({i.id for i in b.invoices})
    assert a.cursors[1:] != b.cursors[1:]
    assert [i.amount_minor for i in a.invoices] != [i.amount_minor for i in b.invoices]
    assert a.faults != b.faults


def test_fault_positions_move_across_seeds_but_keep_their_structure() -> None:
    seen = set()
    for n in range(40):
        data = build_dataset(f"{n:016x}")
        f = data.faults
        seen.add((f.kill_page, f.slow_page, f.backoff_page, f.retry_after_page))
        assert 1 <= f.kill_page < min(f.backoff_page, f.retry_after_page) < f.slow_page
        assert f.slow_page < len(data.pages) and f.backoff_page != f.retry_after_page
        for page in f.duplicate_pages:
            last = data.invoices[min((page + 1) * 10, len(data.invoices)) - 1]
            assert data.pages[page + 1][0] == last
        assert sum(len(p) for p in data.pages) == len(data.invoices) + 3
        assert {EXPONENTS[i.currency] for i in data.invoices} == {0, 2, 3}
        assert {i.currency for i in data.invoices} == {c for c, _ in CURRENCIES}
    assert len(seen) > 5


def test_format_minor_uses_the_exponent() -> None:
    assert format_minor(1234, 0) == "1234"
    assert format_minor(1234, 2) == "12.34"
    assert format_minor(1234, 3) == "1.234"
    assert format_minor(5, 2) == "0.05"
    assert format_minor(7, 3) == "0.007"
    assert format_minor(-1234, 2) == "-12.34"
    assert format_minor(2**53 + 1, 2) == "90071992547409.93"
    assert format_minor(-1200, 2) == "-12.00"


def test_fixtures_are_adversarial_on_every_seed_and_move_with_it() -> None:
    a, b = build_dataset("00000000000000a1"), build_dataset("00000000000000b2")
    for data in (a, b):
        names = {i.customer for i in data.invoices}
        amounts = [i.amount_minor for i in data.invoices]
        assert set(MARKUP_NAMES) <= names and set(BIG_AMOUNTS) <= set(amounts)
        # three credit notes, one big negative, and one below one unit per decimal currency
        assert sum(1 for x in amounts if x < 0) == 3 + 1 + 6
        for code, exp in CURRENCIES:
            tiny = [
                i for i in data.invoices if i.currency == code and -(10**exp) < i.amount_minor < 0
            ]
            assert bool(tiny) == bool(exp), code
        f = data.faults
        assert f.kill_page < min(f.backoff_page, f.retry_after_page) < f.slow_page
        assert len(set(f.duplicate_pages)) == 3
        listed = [i.id for page in data.pages for i in page]
        assert len(listed) == len(data.invoices) + 3
    assert a.faults != b.faults or a.invoices != b.invoices


def test_an_invoice_shows_its_amount_in_its_currency_and_as_json() -> None:
    inv = Invoice("inv_1", "Acme", "KWD", -7)
    assert inv.display_amount == "-0.007"
    assert inv.as_json() == {
        "id": "inv_1", "customer": "Acme", "currency": "KWD", "amount_minor": -7,
    }  # fmt: skip
    assert Invoice("inv_2", "B", "JPY", 12).display_amount == "12"


def test_cursors_lead_from_page_to_page() -> None:
    data = build_dataset(SEED_A)
    assert data.cursors[0] is None and data.page_of(None) == 0
    for page in range(len(data.pages) - 1):
        nxt = data.next_cursor(page)
        assert nxt is not None and data.page_of(nxt) == page + 1
    assert data.next_cursor(len(data.pages) - 1) is None
    assert data.page_of("c-forged") is None
    assert data.by_id == {i.id: i for i in data.invoices} and len(data.by_id) == len(data.invoices)
    assert data.faults.unavailable_page == data.faults.backoff_page


def test_too_few_invoices_for_the_fault_structure_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 6 pages"):
        build_dataset(SEED_A, low=30, high=30)
    assert len(build_dataset(SEED_B, page_size=5, low=30, high=30).pages) == 6
