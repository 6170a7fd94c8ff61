"""The board's scatter plot: one point per entrant, the Pareto frontier marked, text escaped."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from harness.report.board.svg import PlotPoint, scatter

pytestmark = pytest.mark.unit

NS = "{http://www.w3.org/2000/svg}"


def test_points_frontier_and_links() -> None:
    points = [
        PlotPoint("cheap", 1.0, 0.5, href="e/cheap.html"),
        PlotPoint("best", 2.0, 0.9),
        PlotPoint("dear & worse", 3.0, 0.8),
    ]
    root = ET.fromstring(scatter(points, "cost <usd>", "cost-plot"))
    assert root.get("id") == "cost-plot" and root.get("aria-label") == "score against cost <usd>"
    circles = root.iter(f"{NS}circle")
    marked = {c.get("data-entrant"): c.get("class") for c in circles}
    assert marked == {"cheap": "point pareto", "best": "point pareto", "dear & worse": "point"}
    (frontier,) = root.iter(f"{NS}polyline")
    assert len(frontier.get("points", "").split()) == 2
    links = [a.get("href") for a in root.iter(f"{NS}a")]
    assert links == ["e/cheap.html"]


def test_the_x_axis_ends_at_a_round_number_and_scores_stay_in_the_frame() -> None:
    root = ET.fromstring(scatter([PlotPoint("a", 3.1, 1.7)], "wall s", "w"))
    ticks = [t.text for t in root.iter(f"{NS}text") if t.get("class") == "tick"]
    assert "5" in ticks and "0" in ticks  # 3.1 * 1.05 -> 5 (the next 1, 2, 2.5 or 5 x 10^k)
    (circle,) = root.iter(f"{NS}circle")
    frame = next(root.iter(f"{NS}rect"))
    assert float(circle.get("cy", "")) == float(frame.get("y", ""))  # a score above 1 is clamped
    assert list(root.iter(f"{NS}polyline")) == []  # one point: no frontier line


def test_no_points_still_draws_an_empty_frame() -> None:
    root = ET.fromstring(scatter([], "cost", "empty"))
    assert list(root.iter(f"{NS}circle")) == [] and next(root.iter(f"{NS}rect")) is not None
