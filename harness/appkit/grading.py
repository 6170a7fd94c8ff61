"""Grading helpers the app suites share: trace gaps, SPEC-bound timing tests, strict
(all-or-nothing) outcomes, sampled pixel colours and rendered-row lookups.

Timing tests grade a mock's trace: a measured gap between two requests is the client's
pause *plus* request latency, which a loaded machine only makes longer, so every lower
bound is tested against the SPEC's own number minus a few milliseconds of timer slack,
never against a loosened threshold (a 0.16 s pause fails a 0.2 s bound).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from typing import Any

from harness.scoring.rows import Outcome, absent, graded, unavailable

#: Timer slack on a lower bound: sleep() never returns early, the clock is monotonic.
TIMER_SLACK_S = 0.005
#: Latency a measured pause may carry when the next one is compared with it. At load 10
#: on 2 cores a right client's 0.2 s pause measured 0.372 s and its next (0.4 s) 0.407 s.
#: A constant pause p still fails the comparison when 1.5 x (p - 0.25) > p, i.e. from
#: 0.75 s; a smaller constant one falls under the least schedule within a few retries.
LATENCY_ALLOWANCE_S = 0.25
#: A schedule that starts from a short first pause: 10% below it (a 1.4x backoff still
#: falls under it from the third pause).
SHORT_START_TOLERANCE = 0.1


def gaps(asks: Iterable[dict[str, Any]], *, ok_status: int | Collection[int] = 200) -> list[float]:
    """Seconds between consecutive requests (trace ``t_ms``), up to the first answer
    with ``ok_status`` (one status or several, e.g. ``(200, 304)``)."""
    done = {ok_status} if isinstance(ok_status, int) else set(ok_status)
    out: list[float] = []
    prev: dict[str, Any] | None = None
    for r in asks:
        if prev is not None:
            out.append((r["t_ms"] - prev["t_ms"]) / 1000.0)
        if r.get("status") in done:
            break
        prev = r
    return out


def first_pause_ok(pauses: list[float], minimum: float) -> bool:
    """The first retry came at least ``minimum`` seconds after the failure."""
    return bool(pauses) and pauses[0] >= minimum - TIMER_SLACK_S


def growth_failures(pauses: list[float], factor: float, first: float, cap: float) -> list[str]:
    """Where the pauses do not grow by ``factor`` from at least ``first`` seconds (a
    pause may stay at ``cap``).

    A measured gap is the pause plus latency, so the SPEC's least schedule
    (``first * factor**k``, capped) is a lower bound no right client can miss, however
    loaded the machine; a constant pause or a 1.4x backoff from 0.2 s falls under it.
    Each pause is also compared with the previous one, allowing that one
    ``LATENCY_ALLOWANCE_S`` of latency (a pause that does not grow at all fails).
    A first pause shorter than ``first`` is the first-pause requirement's violation,
    not this one's (a 0.16 s first pause doubling after is a 0.2 s miss, not a growth
    miss): the schedule then starts from it, with ``SHORT_START_TOLERANCE`` for the
    latency it carries, which the factor multiplies.
    """
    bad = []
    short = bool(pauses) and pauses[0] < first
    base, keep = (pauses[0], 1.0 - SHORT_START_TOLERANCE) if short else (first, 1.0)
    for k, got in enumerate(pauses):
        least = min(cap, keep * base * factor**k) - TIMER_SLACK_S
        if got < least:
            bad.append(f"pause {k + 1} {got:.3f} s < {least:.3f} s")
        elif k and got < min(cap, factor * (pauses[k - 1] - LATENCY_ALLOWANCE_S)):
            bad.append(f"pause {k + 1} {got:.3f} s not {factor}x pause {k} {pauses[k - 1]:.3f} s")
    return bad


def strict(good: int, total: int, detail: str, evidence: object = None) -> Outcome:
    """All or nothing: 1.0 when every item holds, else 0 (one wrong item is a violation)."""
    if total <= 0:
        return unavailable(detail or "nothing to measure (0 items)", evidence)
    return graded(1.0 if good == total else 0.0, f"{good}/{total}: {detail}", evidence)


def holds(ok: bool, detail: str, evidence: object = None) -> Outcome:
    """All or nothing on one condition: 1.0 when it holds, else 0."""
    return graded(1.0 if ok else 0.0, detail, evidence)


def share(good: int, total: int, detail: str) -> Outcome:
    """All or nothing for the MUST, a fraction for the ranking: every item right is 1.0,
    any miss at most 0.5 (half the share right); nothing to compare is absent."""
    if total <= 0:
        return absent(f"nothing to compare: {detail}")
    return graded(1.0 if good == total else 0.5 * good / total, f"{good}/{total}: {detail}")


def colour_close(px: object, rgb: tuple[int, int, int], tolerance: int) -> bool:
    """A sampled pixel (``[r, g, b, ...]``) within ``tolerance`` of ``rgb`` per channel."""
    return (
        isinstance(px, list)
        and len(px) >= 3
        and all(abs(int(a) - b) <= tolerance for a, b in zip(px[:3], rgb, strict=False))
    )


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
