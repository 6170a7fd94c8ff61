"""The check of the amounts on the page."""

from typing import Any

from harness.appkit.grading import (
    each,
)
from harness.scoring import Outcome

from .console import judge_throughout
from .evidence import Evidence, expected_rows
from .grader import suite


@suite.check(
    "money.exact",
    critical=True,
    severity="money",
    root="app.health",
    musts=("M-MONEY-1",),
    harm="wrong money: an amount shown with wrong decimals, sign or digits, or not entirely",
)
def money_exact(ev: Evidence) -> Outcome:
    mine, why = expected_rows(ev)
    if why is not None:
        return why
    expected = ev.dataset.by_id

    def right(r: dict[str, Any]) -> bool:
        # a clipped amount (ellipsis, cropped) shows wrong money; a covered or hidden
        # one is ui.rows_visible's harm, so only clipping counts here
        why = (r.get("why") or [""] * 4)[3] if len(r.get("why") or []) > 3 else ""
        cells = r.get("cells") or []
        return (
            len(cells) > 3
            and cells[3] == expected[r["id"]].display_amount
            and why not in ("clipped", "ellipsis")
        )

    return each(
        mine,
        right,
        "amounts exact and not clipped",
        lambda r: (
            f"{expected[r['id']].currency} {(r['cells'] + ['', '', '', ''])[3]!r}"
            f"{' (' + r['why'][3] + ')' if len(r.get('why', [])) > 3 and r['why'][3] else ''}"
            f" != {expected[r['id']].display_amount}"
        ),
    )


@suite.check(
    "money.exact_throughout",
    critical=True,
    severity="money",
    root="app.health",
    musts=("M-MONEY-1",),
    harm="wrong money at some moment: an amount cell showed other text than the exact "
    "amount while the page was watched (a refresh, a placeholder, a rounded first draw)",
)
def money_exact_throughout(ev: Evidence) -> Outcome:
    """Every text any amount cell displayed from the browser's first look (mid-sync)
    to the end (``user_view``'s watch) is the SPEC's rendering of its invoice's amount;
    an empty cell is no amount shown."""
    by_id = ev.dataset.by_id
    return judge_throughout(ev, (3,), lambda v: by_id[v[0]].display_amount, "amount texts")
