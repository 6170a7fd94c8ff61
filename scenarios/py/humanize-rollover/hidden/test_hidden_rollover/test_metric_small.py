from __future__ import annotations

import pytest

from humanize import metric


@pytest.mark.parametrize(
    "value, unit, precision, expected",
    [
        (0.0009999, "m", 3, "1.00 mm"),
        (0.0009994, "m", 3, "999 μm"),
        (0.9999e-6, "F", 3, "1.00 μF"),
        (0.99999e-9, "s", 3, "1.00 ns"),
        (0.9996e-3, "A", 4, "999.6 μA"),
        (0.99996e-3, "A", 4, "1.000 mA"),
        (0.0125, "g", 3, "12.5 mg"),
    ],
)
def test_metric_rollover_small(value: float, unit: str, precision: int, expected: str) -> None:
    assert metric(value, unit, precision) == expected
