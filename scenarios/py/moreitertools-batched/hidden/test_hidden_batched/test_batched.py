"""The new batched(iterable, n): tuples of n items, the last one possibly shorter."""

import inspect

import pytest

import more_itertools as mi


@pytest.mark.parametrize(
    "data, n, expected",
    [
        ("ABCDEFG", 3, [("A", "B", "C"), ("D", "E", "F"), ("G",)]),
        ("ABCDEF", 3, [("A", "B", "C"), ("D", "E", "F")]),
        (range(5), 1, [(0,), (1,), (2,), (3,), (4,)]),
        (range(4), 10, [(0, 1, 2, 3)]),
        ([], 2, []),
        ([None, None, None], 2, [(None, None), (None,)]),
    ],
)
def test_batches(data, n, expected):
    assert list(mi.batched(data, n)) == expected


def test_batches_are_tuples():
    for batch in mi.batched(range(7), 3):
        assert type(batch) is tuple


def test_signature():
    assert list(inspect.signature(mi.batched).parameters)[:2] == ["iterable", "n"]
    assert list(mi.batched(iterable="abc", n=2)) == [("a", "b"), ("c",)]


@pytest.mark.parametrize("n", [0, -1])
def test_n_must_be_positive(n):
    with pytest.raises(ValueError):
        list(mi.batched("abc", n))
