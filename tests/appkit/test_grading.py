"""Timing at the SPEC's own bounds: each at-the-bound mistake fails, the right client passes
(measured gaps are pause plus latency, so the right client passes under load too)."""

from __future__ import annotations

import pytest

from harness.appkit.grading import (
    colour_close,
    each,
    first_pause_ok,
    gaps,
    growth_failures,
    holds,
    share,
    strict,
)
from harness.scoring.rows import Status

pytestmark = pytest.mark.unit


def _trace(pauses: list[float], latency: float = 0.0) -> list[dict[str, float | int]]:
    """Requests for one page: 503 after each pause, then a 200."""
    t, out = 0.0, []
    for p in pauses:
        out.append({"t_ms": t * 1000.0, "status": 503})
        t += p + latency
    out.append({"t_ms": t * 1000.0, "status": 200})
    return out


def _backoff(first: float, factor: float, n: int = 4) -> list[float]:
    return [min(5.0, first * factor**k) for k in range(n)]


def test_gaps_stop_at_the_first_success() -> None:
    trace = [*_trace([0.2, 0.4]), {"t_ms": 9000.0, "status": 200}]
    assert gaps(trace) == pytest.approx([0.2, 0.4])


@pytest.mark.parametrize("latency", [0.0, 0.002, 0.03])
def test_a_right_backoff_passes_with_latency(latency: float) -> None:
    for factor in (1.5, 2.0):
        pauses = gaps(_trace(_backoff(0.2, factor), latency))
        assert first_pause_ok(pauses, 0.2)
        assert growth_failures(pauses, 1.5, 0.2, 5.0) == []


def test_a_first_pause_of_0_16_s_fails_the_0_2_s_bound() -> None:
    pauses = gaps(_trace(_backoff(0.16, 1.5), latency=0.003))
    assert not first_pause_ok(pauses, 0.2)


def test_a_short_first_pause_is_not_also_a_growth_miss() -> None:
    """Each MUST its own check: growing 1.5x or 2x from 0.16 s meets the growth bound;
    growing 1.4x from 0.16 s, or not at all, does not."""
    for factor in (1.5, 2.0):
        assert growth_failures(gaps(_trace(_backoff(0.16, factor), 0.003)), 1.5, 0.2, 5.0) == []
    assert growth_failures(gaps(_trace(_backoff(0.16, 1.4), 0.003)), 1.5, 0.2, 5.0)
    assert growth_failures(gaps(_trace([0.16] * 4, 0.003)), 1.5, 0.2, 5.0)


def test_a_1_4x_or_constant_backoff_fails_the_1_5x_bound() -> None:
    assert growth_failures(gaps(_trace(_backoff(0.2, 1.4), 0.003)), 1.5, 0.2, 5.0)
    assert growth_failures(gaps(_trace([0.2] * 4, 0.003)), 1.5, 0.2, 5.0)


def test_a_pause_held_at_the_cap_passes() -> None:
    assert growth_failures([3.0, 4.5, 5.0, 5.0], 1.5, 0.2, 5.0) == []


def test_retry_after_above_one_second_is_a_lower_bound() -> None:
    assert first_pause_ok(gaps(_trace([2.0], 0.01)), 2.0)
    assert not first_pause_ok(gaps(_trace([1.0], 0.01)), 2.0)  # capped at 1 s


def test_strict_is_all_or_nothing() -> None:
    assert strict(67, 67, "amounts").score == 1.0
    assert strict(66, 67, "amounts").score == 0.0
    assert strict(0, 0, "nothing").status is Status.UNAVAILABLE
    out = each([1, 2, 3], lambda x: x != 2, "odd", str)
    assert out.score == 0.0 and "wrong: 2" in out.detail


def test_gaps_stop_at_any_of_several_answers() -> None:
    trace = [{"t_ms": 0.0, "status": 503}, {"t_ms": 250.0, "status": 304}, {"t_ms": 900.0}]
    assert gaps(trace, ok_status=(200, 304)) == pytest.approx([0.25])
    assert gaps(trace) == pytest.approx([0.25, 0.65])  # 304 is not the default answer


def test_holds_share_and_colour_close() -> None:
    assert holds(True, "ok").score == 1.0 and holds(False, "no").score == 0.0
    assert share(4, 4, "rows").score == 1.0
    assert share(3, 4, "rows").score == pytest.approx(0.375)  # any miss: at most half
    assert share(0, 0, "rows").status is Status.ABSENT
    assert colour_close([0x2F, 0x9E, 0x44, 255], (0x2F, 0x9E, 0x44), 12)
    assert colour_close([0x3B, 0x92, 0x50], (0x2F, 0x9E, 0x44), 12)
    assert not colour_close([0x3C, 0x9E, 0x44], (0x2F, 0x9E, 0x44), 12)
    assert not colour_close(None, (0, 0, 0), 12) and not colour_close([1, 2], (1, 2, 3), 12)


def test_one_late_request_of_a_right_client_is_not_a_violation() -> None:
    """Measured at load 10: the 0.2 s pause carried 0.17 s of latency, the 0.4 s one none."""
    assert growth_failures([0.372, 0.407, 0.847, 1.613], 1.5, 0.2, 5.0) == []


@pytest.mark.parametrize("pause", [0.5, 0.8, 2.0])
def test_a_constant_pause_fails_whatever_its_length(pause: float) -> None:
    assert growth_failures([pause] * 5, 1.5, 0.2, 5.0)
