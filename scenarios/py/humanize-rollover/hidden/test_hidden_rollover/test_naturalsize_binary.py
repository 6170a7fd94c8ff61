from __future__ import annotations

import pytest

from humanize import naturalsize


@pytest.mark.parametrize(
    "value, expected",
    [
        (1_048_524, "1023.9 KiB"),
        (1_048_525, "1.0 MiB"),
        (1_048_575, "1.0 MiB"),
        (1_048_576, "1.0 MiB"),
        (-1_048_575, "-1.0 MiB"),
        (1024**3 - 1, "1.0 GiB"),
        (4096, "4.0 KiB"),
    ],
)
def test_binary_rollover(value: int, expected: str) -> None:
    assert naturalsize(value, binary=True) == expected


@pytest.mark.parametrize(
    "value, expected",
    [
        (1_048_575, "1.0M"),
        (1023 * 1024 + 1000, "1.0M"),
        (1_048_524, "1023.9K"),
        (3000, "2.9K"),
        (300, "300B"),
    ],
)
def test_gnu_rollover(value: int, expected: str) -> None:
    assert naturalsize(value, gnu=True) == expected
