"""constrained_batches keeps the behaviour the old batched() had."""

import pytest

import more_itertools as mi

ITEMS = [b"12345", b"123", b"12345678", b"1", b"1", b"12", b"1"]


def test_size_limit():
    assert list(mi.constrained_batches(ITEMS, 10)) == [
        (b"12345", b"123"),
        (b"12345678", b"1", b"1"),
        (b"12", b"1"),
    ]


def test_exact_fit_stays_in_one_batch():
    assert list(mi.constrained_batches(["ab", "cd", "e"], 4)) == [("ab", "cd"), ("e",)]


def test_count_limit():
    assert list(mi.constrained_batches(ITEMS, 10, max_count=2)) == [
        (b"12345", b"123"),
        (b"12345678", b"1"),
        (b"1", b"12"),
        (b"1",),
    ]
    assert list(mi.constrained_batches("abcde", 100, 2)) == [("a", "b"), ("c", "d"), ("e",)]


def test_get_len():
    words = ["a", "bb", "ccc", "dddd"]
    got = list(mi.constrained_batches(words, 2, get_len=lambda _: 1))
    assert got == [("a", "bb"), ("ccc", "dddd")]


def test_strict_is_the_default():
    with pytest.raises(ValueError):
        list(mi.constrained_batches([b"123", b"123456789"], 5))


def test_not_strict_lets_big_items_through_alone():
    got = list(mi.constrained_batches([b"12", b"123456789", b"1"], 5, strict=False))
    assert got == [(b"12",), (b"123456789",), (b"1",)]


def test_bad_max_size():
    with pytest.raises(ValueError):
        list(mi.constrained_batches([b"1"], 0))


def test_empty():
    assert list(mi.constrained_batches([], 3)) == []


def test_lazy_over_an_iterator():
    it = iter([b"1"] * 10)
    batches = mi.constrained_batches(it, 3)
    assert next(batches) == (b"1", b"1", b"1")
    assert next(it) == b"1"  # only one item was read ahead
