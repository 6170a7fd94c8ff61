"""apps/meridian-console: the checks of the fourth pass judged on made-up evidence (fast).

Each test builds the evidence a right app and a wrong app of one kind would leave (the
wrong one as an agent would really err, often only in part) and asserts the check tells
them apart: what the browser tests cost minutes to show, pinned here in milliseconds.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tests.apps.test_meridian_console import SEED, _names

pytestmark = pytest.mark.unit


@cache
def _dataset() -> Any:
    return _names().build_dataset(SEED)


def _ev(tmp_path: Path, **fields: Any) -> Any:
    ev = _names().Evidence(dataset=_dataset(), evidence_dir=tmp_path)
    for key, value in fields.items():
        setattr(ev, key, value)
    return ev


def _score(check: Any, ev: Any) -> float:
    return float(check(ev).score)


def test_the_feed_must_show_the_50_newest_not_the_50_oldest(tmp_path: Path) -> None:
    m = _names()

    def feed(seqs: list[int]) -> Any:
        main = {"feed_after": [{"seq": str(s)} for s in seqs], "approve": {"event_seq": 71}}
        return _ev(tmp_path, browser={"main": main})

    assert _score(m.ui_feed_order, feed(list(range(72, 22, -1)))) == 1.0  # 72..23
    assert _score(m.ui_feed_order, feed(list(range(50, 0, -1)))) == 0.0  # the oldest 50
    assert _score(m.ui_feed_order, feed(list(range(72, 32, -1)))) == 0.0  # only 40 of them
    assert _score(m.ui_feed_order, feed([72, 71, 69, *range(68, 21, -1)])) == 0.0  # a gap


def _cold(tmp_path: Path, tries_s: list[float], end_s: float) -> Any:
    trace = [
        {"kind": "page", "phase": "offline", "t_ms": 100_000 + t * 1000, "status": "reset"}
        for t in tries_s
    ]
    cold = {
        "ok": True,
        "boot_s": 1.2,
        "status": {"vendor": "down"},
        "listing": [{"id": "p"}],
        "t_boot_ms": 100_000.0,
        "t_end_ms": 100_000 + end_s * 1000,
    }
    return _ev(tmp_path, cold=cold, trace=trace)


def test_a_cold_booted_ledger_must_keep_trying_the_vendor(tmp_path: Path) -> None:
    m = _names()
    assert _score(m.res_down_boot, _cold(tmp_path, [0.3, 2.3, 4.3, 6.3], 6.6)) == 1.0
    assert _score(m.res_down_boot, _cold(tmp_path, [0.3, 5.2], 6.6)) == 1.0  # every 5 s
    assert _score(m.res_down_boot, _cold(tmp_path, [0.3], 6.6)) == 0.0  # once, then never
    assert _score(m.res_down_boot, _cold(tmp_path, [], 6.6)) == 0.0


def _walk(page: int, gaps: list[float]) -> list[dict[str, Any]]:
    t, out = 50_000.0, []
    for g in gaps:
        out.append({"kind": "page", "phase": "initial-sync", "page": page, "t_ms": t})
        out[-1]["status"] = "reset"
        t += g * 1000
    out.append({"kind": "page", "phase": "initial-sync", "page": page, "t_ms": t, "status": 200})
    return out


def test_connection_errors_are_retried_with_the_backoff(tmp_path: Path) -> None:
    m = _names()
    page = _dataset().faults.outage_page
    right = _ev(tmp_path, trace=_walk(page, [0.21, 0.41, 0.81, 1.61, 2.01]))
    fixed = _ev(tmp_path, trace=_walk(page, [0.5] * 9))
    assert _score(m.wire_outage_growth, right) == 1.0
    assert _score(m.wire_outage_growth, fixed) == 0.0
    # and no pause longer than 2 s plus the attempt: a 2.5 s cap fails
    capped = _ev(tmp_path, trace=_walk(page, [0.21, 0.41, 0.81, 1.61, 2.5]))
    assert _score(m.wire_outage_cap, capped) == 0.0


def test_a_fifth_file_fetched_by_script_counts_and_the_favicon_does_not(tmp_path: Path) -> None:
    m = _names()
    base = "http://127.0.0.1:8123"
    four = [{"url": f"{base}{p}", "type": "script", "size": 100} for p in m.FE_FILES]
    api = [{"url": f"{base}/api/field", "type": "fetch", "size": 9}]
    icon = [{"url": f"{base}/favicon.ico", "type": "other", "size": 50}]
    shader = [{"url": f"{base}/shaders/col.glsl", "type": "fetch", "size": 900}]

    def run(reqs: list[dict[str, Any]]) -> float:
        return _score(m.fe_files, _ev(tmp_path, browser={"main": {"requests": reqs}}))

    assert run(four + api + icon) == 1.0
    assert run(four + api + shader) == 0.0
    pasted = [dict(four[0], marks=["license banner", "minified"]), *four[1:]]
    assert run(pasted + api) == 0.0  # the four files, but one holds a library


def test_code_from_elsewhere_is_marked_and_the_reference_is_not() -> None:
    m = _names()
    marks = m.third_party_marks
    static = Path(m.HERE).parent / "solution" / "ledgerd" / "static"
    assert [marks(f.read_text()) for f in sorted(static.iterdir())] == [[], [], [], []]
    patch = (Path(m.HERE).parent / "defects" / "vendored-matrix-lib.patch").read_text()
    added = "\n".join(line[1:] for line in patch.splitlines() if line.startswith("+"))
    served = added + "\n" + (static / "field.js").read_text()  # as the defect serves it
    assert marks(served) == ["license banner", "minified"]
    assert marks("// webpack\nvar x = __webpack_require__(3);") == ["bundler runtime"]
    assert marks("const s = 1;\n//# sourceMappingURL=app.js.map\n") == ["source map"]
    assert marks("a=1;" * 1200) == ["minified"]  # one 4,800-character line
    hand = "\n".join(f"  const v{i} = mat4Multiply(a, b); // orbit" for i in range(400))
    assert marks(hand) == []  # long, but written by hand: short lines, no banner


def test_only_sqlite_and_its_own_sidecars_may_sit_in_a_db_dir(tmp_path: Path) -> None:
    m = _names()
    files = ["ledger/ledger.sqlite3", "notifier/notes.sqlite3"]
    assert _score(m.boot_sqlite, _ev(tmp_path, sqlite_files=files)) == 1.0
    assert (
        _score(m.boot_sqlite, _ev(tmp_path, sqlite_files=files, other_files=["ledger/walk.json"]))
        == 0.0
    )


def test_the_summary_lists_currencies_by_code_and_days_in_order(tmp_path: Path) -> None:
    m = _names()

    def summary(codes: list[str], days: list[str]) -> Any:
        s = {"currencies": [{"currency": c} for c in codes], "days": [{"day": d} for d in days]}
        return _ev(tmp_path, summary=s)

    days = ["2026-03-01", "2026-03-02"]
    assert _score(m.api_summary_order, summary(["CLF", "EUR", "JPY"], days)) == 1.0
    assert _score(m.api_summary_order, summary(["EUR", "CLF", "JPY"], days)) == 0.0  # by sum
    assert _score(m.api_summary_order, summary(["CLF", "EUR"], days[::-1])) == 0.0


def test_row_cells_must_read_as_the_ledger_holds_them(tmp_path: Path) -> None:
    m = _names()
    ds = _dataset()
    listing = [
        {"id": p.id, "status": p.status, "note": "checked" if i == 3 else None}
        for i, p in enumerate(ds.api_order()[:100])
    ]

    def page(status: Any) -> Any:
        rows = [
            {
                "id": i["id"],
                "cells": ["", "", "", ds.by_id[i["id"]].currency, "", status(i), i["note"] or ""],
            }
            for i in listing
        ]
        return _ev(
            tmp_path,
            listing=listing,
            listing_pages=listing,
            browser={"main": {"pages": {1: {"rows": rows}}}},
        )

    assert _score(m.ui_row_cells, page(lambda i: i["status"])) == 1.0
    assert _score(m.ui_row_cells, page(lambda i: i["status"].capitalize())) == 0.0


def test_an_approval_without_an_answer_must_be_reported_too(tmp_path: Path) -> None:
    m = _names()
    said = {"visible": True, "text": "Approval of d1 failed (502): vendor unavailable"}
    refused = {"error_s": 1.2, "error": said, "draft_f": {"state": "pending"}, "draft_row": []}

    def run(unanswered: dict[str, Any] | None) -> float:
        errors = {**refused, **({"unanswered": unanswered} if unanswered is not None else {})}
        return _score(m.journey_approve_error, _ev(tmp_path, browser={"errors": errors}))

    told = {"button": True, "error_s": 0.1, "error": {"visible": True, "text": "no answer"}}
    assert run(told) == 1.0
    # the common slip: only an error status is handled, a rejected fetch says nothing
    assert run({"button": True, "error_s": None, "error": {"visible": False, "text": ""}}) == 0.0
    assert run(None) == 0.0  # the no-answer path never ran: not met


def _default_view(layout: str, x: float, y: float) -> str:
    """The status letter the default view shows at css point (x, y): "" on the plane."""
    cx, cy = int(x // 8), int(y // 8)
    inside = 0 <= cx < 128 and 0 <= cy < 96 and abs(x - (cx + 0.5) * 8) <= 3.2
    inside = inside and abs(y - (cy + 0.5) * 8) <= 3.2 and cy * 128 + cx < len(layout)
    return layout[cy * 128 + cx] if inside else ""


def test_a_drag_that_pans_the_default_view_is_not_an_orbit() -> None:
    import math
    import random

    m = _names()
    rng = random.Random(7)
    layout = "".join(rng.choices("spfr", weights=(50, 25, 25, 1), k=12_288))
    rgb = {name[0]: value for name, value in m.STATUS_RGB.items()}
    cells = m.grid_cells()

    def after(move: Any) -> list[list[int]]:  # the drag's image at the script's spots
        spots = [((x + u) * 8, (y + v) * 8) for u, v in m.PAN_SPOTS for x, y in cells]
        seen = [_default_view(layout, *move(x, y)) for x, y in spots]
        return [list(rgb[c]) if c else list(m.PLANE_RGB) for c in seen]

    # a pan by any amount, a half-cell one included: found, at every sample
    for (dx, dy), cells_moved in (((179.2, -77.6), (22, -10)), ((-40.0, 12.0), (-5, 1))):
        pan = m._pan(after(lambda x, y, dx=dx, dy=dy: (x - dx, y - dy)), layout)
        assert pan is not None and pan[0] == cells_moved and pan[1] == 1.0
    # an orbit: the top-down view turned about the field's centre
    for deg in (3, 20, 90):
        t = math.radians(deg)

        def turn(x: float, y: float, t: float = t) -> tuple[float, float]:
            u, v = x - 512, y - 384
            return 512 + u * math.cos(t) + v * math.sin(t), 384 - u * math.sin(t) + v * math.cos(t)

        assert m._pan(after(turn), layout) is None
    # a field tilted away (rows squeezed toward the centre): no translation either
    assert m._pan(after(lambda x, y: (x, 384 + (y - 384) / 0.7)), layout) is None
    # a field of one status nearly everywhere matches any shift by chance: not a pan
    plain = "".join(rng.choices("spfr", weights=(97, 1, 1, 1), k=12_288))
    layout = plain
    assert m._pan(after(turn), plain) is None
    assert m._pan(None, plain) is None  # no image read: nothing to say
