"""Checks of performance: the first walk's request count and the API's latency under a
small load."""

from __future__ import annotations

from harness.scoring import Outcome, absent, graded

from .bounds import LATENCY_OK_S, LATENCY_ZERO_S, OPTIMAL_WALK
from .evidence import Evidence
from .grader import suite


@suite.check(
    "perf.requests",
    musts=("M-EFF-1",),
    tier="performance",
    root="app.boots",
    harm="wasted vendor quota: more requests than the optimal walk",
)
def perf_requests(ev: Evidence) -> Outcome:
    reqs = ev.pages("initial-sync", "after-respawn")
    if not reqs:
        return absent("the vendor was never asked for a page")
    n = len(reqs)
    # the SPEC's own count: a request per page plus one per failed attempt, nothing else
    return graded(
        1.0 if n <= OPTIMAL_WALK else 0.0,
        f"{n} page requests for the first sync (the SPEC's count {OPTIMAL_WALK})",
    )


@suite.check(
    "perf.latency",
    tier="performance",
    root="app.boots",
    harm="slow API: listing and summary requests are slow under a small load",
)
def perf_latency(ev: Evidence) -> Outcome:
    lat = ev.latencies
    if not lat:
        return absent("the API was not reached")
    p95 = lat[min(len(lat) - 1, int(0.95 * len(lat)))]
    score = (
        1.0
        if p95 <= LATENCY_OK_S
        else max(0.0, (LATENCY_ZERO_S - p95) / (LATENCY_ZERO_S - LATENCY_OK_S))
    )
    return graded(round(score, 1), f"p95 {p95 * 1000:.0f} ms over {len(lat)} requests, 4 at a time")
