"""Seed derivation and the fixtures built from it: same seed same, other seed other."""

from __future__ import annotations

import pytest

from harness.scoring.appkit.fixtures import CURRENCIES, EXPONENTS, build_dataset, format_minor
from harness.scoring.appkit.seeding import between, derive, derive_bytes, pick, rng

pytestmark = pytest.mark.unit

SEED_A = "a11ce5eedf00d123"
SEED_B = "0123456789abcdef"


def test_derive_is_hmac_of_seed_and_label() -> None:
    assert derive_bytes(SEED_A, "x") == derive_bytes(SEED_A, "x")
    assert len(derive_bytes(SEED_A, "x")) == 32
    assert derive(SEED_A, "x") != derive(SEED_A, "y")
    assert derive(SEED_A, "x") != derive(SEED_B, "x")
    assert rng(SEED_A, "r").random() == rng(SEED_A, "r").random()
    assert pick(SEED_A, "p", ["only"]) == "only"
    assert all(3 <= between(SEED_B, f"b{i}", 3, 5) <= 5 for i in range(50))
    with pytest.raises(ValueError):
        between(SEED_A, "empty", 2, 1)


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
