"""Grading helpers the app suites share: trace gaps, SPEC-bound timing tests, strict
(all-or-nothing) outcomes and rendered-row lookups.

Timing tests grade a mock's trace: a measured gap between two requests is the client's
pause *plus* request latency, which a loaded machine only makes longer, so every lower
bound is tested against the SPEC's own number minus a few milliseconds of timer slack,
never against a loosened threshold (a 0.16 s pause fails a 0.2 s bound).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from harness.scoring.rows import Outcome, absent, graded, unavailable

#: Timer slack on a lower bound: sleep() never returns early, the clock is monotonic.
TIMER_SLACK_S = 0.005
#: Latency slack when one pause is compared with the previous measured one.
GROWTH_SLACK_S = 0.04


def gaps(asks: Iterable[dict[str, Any]], *, ok_status: int = 200) -> list[float]:
    """Seconds between consecutive requests (trace ``t_ms``), up to the first answer
    with ``ok_status``."""
    out: list[float] = []
    prev: dict[str, Any] | None = None
    for r in asks:
        if prev is not None:
            out.append((r["t_ms"] - prev["t_ms"]) / 1000.0)
        if r.get("status") == ok_status:
            break
        prev = r
    return out


def first_pause_ok(pauses: list[float], minimum: float) -> bool:
    """The first retry came at least ``minimum`` seconds after the failure."""
    return bool(pauses) and pauses[0] >= minimum - TIMER_SLACK_S


def growth_failures(pauses: list[float], factor: float, first: float, cap: float) -> list[str]:
    """Where the pauses do not grow by ``factor`` from at least ``first`` seconds (a
    pause may stay at ``cap``).

    Each pause is compared with the previous measured one (``GROWTH_SLACK_S`` for the
    previous request's latency), and their sum with the least the SPEC allows
    (``first * factor**k`` each): a constant pause or a 1.4x backoff from 0.2 s fails,
    a 1.5x one passes under load.
    """
    bad = []
    for k in range(1, len(pauses)):
        need = min(cap, factor * pauses[k - 1]) - GROWTH_SLACK_S
        if pauses[k] < need:
            bad.append(f"pause {k + 1} {pauses[k]:.3f} s < {need:.3f} s")
    least = sum(min(cap, first * factor**k) for k in range(len(pauses)))
    if sum(pauses) < least - TIMER_SLACK_S * len(pauses):
        bad.append(f"pauses sum {sum(pauses):.3f} s < {least:.3f} s")
    return bad


def strict(good: int, total: int, detail: str, evidence: object = None) -> Outcome:
    """All or nothing: 1.0 when every item holds, else 0 (one wrong item is a violation)."""
    if total <= 0:
        return unavailable(detail or "nothing to measure (0 items)", evidence)
    return graded(1.0 if good == total else 0.0, f"{good}/{total}: {detail}", evidence)


def each(
    items: list[Any], ok: Callable[[Any], bool], detail: str, show: Callable[[Any], str]
) -> Outcome:
    """``strict`` over ``items`` with the first failures named."""
    bad = [i for i in items if not ok(i)]
    named = ", ".join(show(i) for i in bad[:3])
    return strict(len(items) - len(bad), len(items), detail + (f"; wrong: {named}" if bad else ""))


def probe_rows(probe: Any, probe_error: str | None) -> tuple[list[dict[str, Any]] | None, Outcome]:
    """A browser probe's rows, or the outcome to return when there are none."""
    if probe is None:
        return None, unavailable(f"no browser probe: {probe_error}")
    if probe.error:
        return None, absent(f"the page did not load: {probe.error}")
    return list(probe.rows), graded(1.0)
