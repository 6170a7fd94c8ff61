from __future__ import annotations

import pytest

from humanize import metric


@pytest.mark.parametrize(
    "value, unit, precision, expected",
    [
        (999.4, "", 3, "999"),
        (999.5, "", 3, "1.00 k"),
        (999.9, "V", 3, "1.00 kV"),
        (999_999, "V", 3, "1.00 MV"),
        (999_499, "W", 3, "999 kW"),
        (-999.9, "W", 3, "-1.00 kW"),
        (-999_999_999, "Hz", 3, "-1.00 GHz"),
        (999.96, "", 4, "1.000 k"),
        (999.94, "", 4, "999.9"),
        (1500, "", 3, "1.50 k"),
        (2.2e9, "B", 3, "2.20 GB"),
    ],
)
def test_metric_rollover_up(value: float, unit: str, precision: int, expected: str) -> None:
    assert metric(value, unit, precision) == expected
