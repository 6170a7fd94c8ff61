"""What the checks share: the figures they compare with and small readers of the evidence."""

from __future__ import annotations

from typing import Any

from harness.appkit.grading import TIMER_SLACK_S, colour_close, gaps
from harness.scoring import Outcome, absent

STATUS_RGB = {
    "pending": (0xF0, 0xB4, 0x29),
    "settled": (0x2F, 0x9E, 0x44),
    "failed": (0xE0, 0x31, 0x31),
    "refunded": (0x1C, 0x7E, 0xD6),
}
COLOUR_TOL = 12
SLACK_S = TIMER_SLACK_S
FE_BUDGET = 150_000
#: what a pace check allows above the SPEC's figure (browser timers, a loaded machine)
PACE_SLACK_S = 0.25


# -- helpers ------------------------------------------------------------------------------


def ids(items: list[dict[str, Any]] | None) -> list[str]:
    return [str(i.get("id")) for i in items or []]


def truth_order(ev: Any) -> list[str]:
    return [p.id for p in ev.dataset.api_order()]


def need_listing(ev: Any) -> Outcome | None:
    if ev.respawn_error:
        return absent(f"no restart after the first SIGKILL: {ev.respawn_error}")
    if not ev.listing:
        return absent("GET /api/payments gave no {items: [...]} listing")
    return None


def page_requests(ev: Any, page: int) -> list[dict[str, Any]]:
    return [r for r in ev.walk() if r.get("page") == page]


def pauses(asks: list[dict[str, Any]]) -> list[float]:
    """Seconds between the asks of one page, up to its first answer."""
    return gaps(asks, ok_status=(200, 304))


def main(ev: Any) -> dict[str, Any]:
    return dict(ev.browser.get("main") or {})


def no_browser(ev: Any, what: str) -> Outcome:
    if ev.probe_error:
        from harness.scoring import unavailable

        return unavailable(f"browser: {ev.probe_error}")
    return absent(f"no {what}: the run stopped before it")


def rows_of(look: dict[str, Any] | None) -> list[dict[str, Any]]:
    return list((look or {}).get("rows") or [])


def close(px: Any, rgb: tuple[int, int, int]) -> bool:
    return colour_close(px, rgb, COLOUR_TOL)


def _expected_rows(ev: Any, n: int) -> list[dict[str, Any]]:
    listing = ev.listing or []
    return listing[(n - 1) * 100 : n * 100]


def _pages(ev: Any) -> dict[int, dict[str, Any]]:
    return {int(k): v for k, v in (main(ev).get("pages") or {}).items()}
