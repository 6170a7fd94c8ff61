"""The board's pages as HTML: text escaped, the layout's links relative to the page's depth,
entrant slugs safe as file names, and the overview's eras, entrant links and plots."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import pytest

from harness.report.board.pages import entrant_slug, esc, layout, overview, table
from harness.report.collect import RunResult
from harness.report.summary import summarise

pytestmark = pytest.mark.unit


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.hrefs += [v or "" for k, v in attrs if k in ("href", "src")]


def _parse(html: str) -> _Links:
    parser = _Links()
    parser.feed(html)
    return parser


def _run(agent: str, cost: float | None) -> RunResult:
    return RunResult(
        run_dir=Path("/nowhere"),
        run_id=f"go/x-{agent}",
        scenario="go/x",
        era="tests@1.0.0",
        agent=agent,
        agent_version="1",
        model="m/<b>",
        outcome="success",
        score=1.0,
        partial_score=None,
        started_at="2030-01-01T00:00:00",
        wall_s=2.0,
        usage={} if cost is None else {"cost_usd": cost},
    )


def test_text_is_escaped_and_links_follow_the_depth() -> None:
    assert esc("<script>&'\"") == "&lt;script&gt;&amp;&#x27;&quot;" and esc(None) == ""
    page = layout("a <b>", "<p>body</p>", 2)
    assert "<title>a &lt;b&gt;</title>" in page and "<p>body</p>" in page
    assert _parse(page).hrefs == ["../../style.css", "../../index.html", "../../board.js"]
    assert table(["a<"], [["<i>x</i>"], []]) == (
        '<table class="sortable"><thead><tr><th>a&lt;</th></tr></thead>'
        "<tbody><tr><td><i>x</i></td></tr><tr></tr></tbody></table>"
    )


def test_an_entrant_slug_is_a_safe_file_name() -> None:
    assert entrant_slug("codex", "0.1.2", "org/model:Q4 <x>") == "codex-0.1.2-org-model-Q4--x-"


def test_the_overview_links_entrants_and_plots_what_is_known() -> None:
    html = overview(summarise([_run("a", 0.5), _run("b", None)]), {"tests@1.0.0": "proven"}, "all")
    links = _parse(html)
    assert "entrants/a-1-m--b-.html" in links.hrefs and "entrants/b-1-m--b-.html" in links.hrefs
    assert 'data-era="tests@1.0.0"' in html and "grader: proven" in html
    assert "m/&lt;b&gt;" in html and "m/<b>" not in html
    assert "not plotted (unknown): b 1 + m/&lt;b&gt;" in html  # no cost recorded
    assert links.tags.count("svg") == 2  # cost and wall time
    assert "No results yet" in overview([])
