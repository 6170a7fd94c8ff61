"""batched() must stream: infinite inputs work and nothing is read ahead."""

from itertools import count, islice

import more_itertools as mi


def test_infinite_iterable():
    got = [tuple(b) for b in islice(mi.batched(count(), 4), 3)]
    assert got == [(0, 1, 2, 3), (4, 5, 6, 7), (8, 9, 10, 11)]


def test_reads_only_what_it_yields():
    it = iter(range(100))
    batches = mi.batched(it, 3)
    assert tuple(next(batches)) == (0, 1, 2)
    assert next(it) == 3
    assert tuple(next(batches)) == (4, 5, 6)
    assert next(it) == 7


def test_consumer_may_keep_batches():
    batches = list(mi.batched(range(6), 2))
    assert [tuple(b) for b in batches] == [(0, 1), (2, 3), (4, 5)]
    assert len({id(b) for b in batches}) == 3
