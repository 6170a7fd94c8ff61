"""split: shares add up exactly, differ by at most one minor unit, larger first."""

import pytest

from ledger import Money, split


def minors(shares: list[Money]) -> list[int]:
    return [s.minor for s in shares]


def test_split_thirds_keeps_every_cent() -> None:
    assert minors(split(Money(10000, "USD"), 3)) == [3334, 3333, 3333]


def test_split_negative() -> None:
    assert minors(split(Money(-100, "USD"), 3)) == [-34, -33, -33]


def test_split_small_amount_many_parts() -> None:
    assert minors(split(Money(2, "JPY"), 4)) == [1, 1, 0, 0]


def test_split_one_part() -> None:
    assert split(Money(1005, "KWD"), 1) == [Money(1005, "KWD")]


@pytest.mark.parametrize("minor", [0, 1, 7, 99, 101, 1001, 999_999, -1, -250, 10**20 + 3])
@pytest.mark.parametrize("parts", [1, 2, 3, 6, 7, 11])
def test_split_invariants(minor: int, parts: int) -> None:
    shares = split(Money(minor, "EUR"), parts)
    assert len(shares) == parts
    assert sum(s.minor for s in shares) == minor
    sizes = [abs(s.minor) for s in shares]
    assert max(sizes) - min(sizes) <= 1
    assert sizes == sorted(sizes, reverse=True)
    assert all(s.currency == "EUR" for s in shares)
    assert all((s.minor >= 0) == (minor >= 0) or s.minor == 0 for s in shares)


@pytest.mark.parametrize("parts", [0, -2])
def test_split_rejects_bad_parts(parts: int) -> None:
    with pytest.raises(ValueError):
        split(Money(100, "USD"), parts)
