"""Scatter plots of score against cost or wall time, drawn as SVG text in Python.

Lower x is better, higher score is better; the Pareto frontier (no other entrant is both
cheaper-or-faster and at least as good) is joined by a line and its points are marked.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

from harness.report.stats import pareto_front

W, H = 560, 320
LEFT, RIGHT, TOP, BOTTOM = 56, 24, 16, 44


@dataclass(frozen=True)
class PlotPoint:
    label: str
    x: float
    y: float
    href: str = ""


def _nice_max(value: float) -> float:
    """The smallest 1, 2, 2.5 or 5 x 10^k at or above ``value`` (axis end)."""
    if value <= 0:
        return 1.0
    magnitude = 10 ** math.floor(math.log10(value))
    return float(next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= value))


def scatter(points: list[PlotPoint], x_label: str, plot_id: str) -> str:
    """An SVG scatter plot: one ``circle.point`` per entrant, ``polyline.frontier``."""
    xmax = _nice_max(max((p.x for p in points), default=1.0) * 1.05)

    def px(x: float) -> float:
        return LEFT + (W - LEFT - RIGHT) * (x / xmax)

    def py(y: float) -> float:
        return H - BOTTOM - (H - TOP - BOTTOM) * max(0.0, min(1.0, y))

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="plot" id="{escape(plot_id)}" '
        f'viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img" '
        f'aria-label="score against {escape(x_label)}">',
        f'<rect x="{LEFT}" y="{TOP}" width="{W - LEFT - RIGHT}" height="{H - TOP - BOTTOM}" '
        'class="frame"/>',
    ]
    for i in range(6):
        y = i / 5
        parts.append(
            f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{py(y):.1f}" y2="{py(y):.1f}" class="grid"/>'
            f'<text x="{LEFT - 6}" y="{py(y) + 4:.1f}" class="tick" text-anchor="end">'
            f"{y:.1f}</text>"
        )
        x = xmax * i / 5
        parts.append(
            f'<text x="{px(x):.1f}" y="{H - BOTTOM + 16}" class="tick" text-anchor="middle">'
            f"{x:.3g}</text>"
        )
    parts.append(
        f'<text x="{(LEFT + W - RIGHT) / 2}" y="{H - 8}" class="axis" text-anchor="middle">'
        f"{escape(x_label)} (lower is better)</text>"
        f'<text x="14" y="{(TOP + H - BOTTOM) / 2}" class="axis" text-anchor="middle" '
        f'transform="rotate(-90 14 {(TOP + H - BOTTOM) / 2})">score</text>'
    )
    front = pareto_front([(p.x, p.y) for p in points])
    if len(front) > 1:
        coords = " ".join(f"{px(points[i].x):.1f},{py(points[i].y):.1f}" for i in front)
        parts.append(f'<polyline points="{coords}" class="frontier"/>')
    on_front = set(front)
    for i, p in enumerate(points):
        cls = "point pareto" if i in on_front else "point"
        right = px(p.x) > LEFT + 0.6 * (W - LEFT - RIGHT)
        circle = (
            f'<circle cx="{px(p.x):.1f}" cy="{py(p.y):.1f}" r="6" class="{cls}" '
            f'data-entrant="{escape(p.label)}"><title>{escape(p.label)}: score {p.y:.3f}, '
            f"{escape(x_label)} {p.x:.4g}</title></circle>"
            f'<text x="{px(p.x) + (-9 if right else 9):.1f}" y="{py(p.y) - 8:.1f}" '
            f'class="label" text-anchor="{"end" if right else "start"}">'
            f"{escape(p.label)}</text>"
        )
        parts.append(f'<a href="{escape(p.href)}">{circle}</a>' if p.href else circle)
    parts.append("</svg>")
    return "\n".join(parts)
