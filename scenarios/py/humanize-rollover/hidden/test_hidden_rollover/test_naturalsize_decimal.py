from __future__ import annotations

import pytest

from humanize import naturalsize


@pytest.mark.parametrize(
    "value, expected",
    [
        (999_949, "999.9 kB"),
        (999_950, "1.0 MB"),
        (999_999, "1.0 MB"),
        (1_000_000, "1.0 MB"),
        (-999_999, "-1.0 MB"),
        (999_999_999, "1.0 GB"),
        (999_949_999_999, "999.9 GB"),
        ("999999", "1.0 MB"),
        (999_999.0, "1.0 MB"),
        (999, "999 Bytes"),
        (1, "1 Byte"),
        (3_000_000, "3.0 MB"),
    ],
)
def test_decimal_rollover(value: float | str, expected: str) -> None:
    assert naturalsize(value) == expected


@pytest.mark.parametrize(
    "value, fmt, expected",
    [
        (999_999, "%.3f", "999.999 kB"),
        (999_999.6, "%.3f", "1.000 MB"),
        (999_500, "%.0f", "1 MB"),
        (999_499, "%.0f", "999 kB"),
        (1_999_999, "%.2f", "2.00 MB"),
    ],
)
def test_decimal_rollover_with_format(value: float, fmt: str, expected: str) -> None:
    assert naturalsize(value, format=fmt) == expected
