"""The distribution functions (normal, t, incomplete beta, binomial tail) against printed tables."""

from __future__ import annotations

import pytest

from harness.report.dist import betainc, binom_cdf_half, t_cdf, t_quantile, z_quantile

pytestmark = pytest.mark.unit

Z = 1.959963984540054


def test_distributions_match_printed_tables() -> None:
    assert z_quantile(0.975) == pytest.approx(Z)
    assert t_quantile(0.975, 4) == pytest.approx(2.776445, abs=1e-6)
    assert t_quantile(0.975, 1) == pytest.approx(12.706205, abs=1e-5)
    assert t_quantile(0.025, 9) == pytest.approx(-2.262157, abs=1e-6)
    assert t_cdf(2.0, 10) == pytest.approx(0.963306, abs=1e-6)
    assert betainc(2, 3, 0.4) == pytest.approx(0.5248)  # 1 - sum_{j<2} C(4,j) .4^j .6^(4-j)
    assert binom_cdf_half(1, 4) == 5 / 16 and binom_cdf_half(-1, 4) == 0.0
