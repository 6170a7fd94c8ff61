"""Checks of tier P: the frontend budget and files, the vendor requests, the API latency and
the console's first paint and frame."""

from __future__ import annotations

from typing import Any

from harness.appkit.grading import holds
from harness.scoring import Outcome, absent, graded

from .fixtures import ERRORS_IN_A_ROW, PAGES
from .grader import ck
from .readers import FE_BUDGET, main, no_browser

FE_FILES = {"/", "/app.js", "/field.js", "/style.css"}


# -- P: performance and the frontend budget ---------------------------------------------


def _fe(ev: Any) -> list[dict[str, Any]]:
    """Every request of the console's main session, as the browser saw them."""
    return main(ev).get("requests") or []


def _static(reqs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The console's requests for files: every same-origin request but the API's, of any
    resource type (a shader or a module fetched with ``fetch()`` is a file too); the
    favicon the browser asks for by itself is not the console's."""
    from urllib.parse import urlsplit

    def is_file(url: str) -> bool:
        parts = urlsplit(url)
        path = parts.path
        local = parts.hostname in ("127.0.0.1", "localhost")
        return local and not path.startswith("/api/") and path != "/favicon.ico"

    return [r for r in reqs if is_file(r["url"])]


@ck(
    "fe.budget",
    "performance",
    "heavy console: the four files exceed 150,000 bytes",
    ("M-FE-1",),
    root="journey.load",
)
def fe_budget(ev: Any) -> Outcome:
    reqs = _fe(ev)
    if not reqs:
        return no_browser(ev, "console requests")
    static = _static(reqs)
    size = sum(int(r.get("size") or 0) for r in static)
    return holds(
        size <= FE_BUDGET and all(r.get("size") is not None for r in static),
        f"{size} bytes in {len(static)} static files",
    )


@ck(
    "fe.files",
    "performance",
    "unreviewed code: more than the four frontend files, or code from elsewhere",
    ("M-FE-1",),
    root="journey.load",
)
def fe_files(ev: Any) -> Outcome:
    from urllib.parse import urlsplit

    reqs = _fe(ev)
    if not reqs:
        return no_browser(ev, "console requests")
    files = _static(reqs)
    static = {urlsplit(r["url"]).path for r in files}
    foreign = [
        r["url"] for r in reqs if urlsplit(r["url"]).hostname not in ("127.0.0.1", "localhost")
    ]
    # SPEC 1.5 and 6.6: only code the entrant wrote (browse.third_party_marks)
    marked = {urlsplit(r["url"]).path: r["marks"] for r in files if r.get("marks")}
    ok = static <= FE_FILES and not foreign and not marked
    return holds(
        ok, f"static files {sorted(static)}; foreign {foreign[:3]}; third-party code {marked}"
    )


@ck("perf.requests", "performance", "wasted calls: more vendor requests than the walk needs")
def perf_requests(ev: Any) -> Outcome:
    reqs = ev.walk()
    if not reqs:
        return absent("no walk")
    outage = sum(1 for r in reqs if r.get("outage"))
    n = len(reqs) - outage
    optimal = PAGES + 1 + 1 + 1 + ERRORS_IN_A_ROW  # held, dropped, 429, 503s
    return graded(
        min(1.0, optimal / max(1, n)),
        f"{n} requests (+{outage} during the outage); optimal {optimal}",
    )


@ck("perf.latency", "performance", "slow API under concurrent use")
def perf_latency(ev: Any) -> Outcome:
    lat = ev.latencies
    if not lat:
        return absent("no load run")
    p95 = lat[int(0.95 * (len(lat) - 1))]
    return graded(1.0 if p95 <= 1.0 else max(0.0, 1 - (p95 - 1.0) / 2.0), f"p95 {p95:.3f} s")


@ck("perf.latency_sync", "performance", "slow API while a walk runs")
def perf_latency_sync(ev: Any) -> Outcome:
    lat = ev.latency_sync
    if not lat:
        return absent("no load during the walk")
    p95 = lat[int(0.95 * (len(lat) - 1))]
    return graded(1.0 if p95 <= 1.0 else max(0.0, 1 - (p95 - 1.0) / 2.0), f"p95 {p95:.3f} s")


@ck("perf.first_paint", "performance", "slow console: rows appear late", root="journey.load")
def perf_first_paint(ev: Any) -> Outcome:
    t = (main(ev).get("load") or {}).get("paint_s")
    if t is None:
        return no_browser(ev, "first paint")
    return graded(1.0 if t <= 4.0 else max(0.0, 1 - (t - 4.0) / 4.0), f"100 rows after {t} s")


@ck(
    "perf.field_frame",
    "performance",
    "slow field: the first frame comes late",
    root="field.instanced",
)
def perf_field_frame(ev: Any) -> Outcome:
    t = (main(ev).get("field") or {}).get("first_frame_s")
    if t is None:
        return no_browser(ev, "field frame")
    return graded(
        1.0 if t <= 5.0 else max(0.0, 1 - (t - 5.0) / 5.0), f"first instanced frame after {t} s"
    )
