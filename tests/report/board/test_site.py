"""Building the board's site: the overview, one page per entrant and per run, the scorer's
screenshots copied beside them, and pages of runs no longer shown removed."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.report.board.site import build_board, copy_screenshots
from harness.report.collect import read_run
from tests.support.jobs_agents import write_result

pytestmark = pytest.mark.unit

PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 16


def _runs(results: Path, ids: list[str]) -> list:  # type: ignore[type-arg]
    out = []
    for i, run_id in enumerate(ids):
        agent = "oracle" if i % 2 == 0 else "nop"
        shot = PNG if i == 0 else None
        out.append(read_run(write_result(results, "apps/x", run_id, agent=agent, screenshot=shot)))
    return out


def test_the_site_has_an_overview_entrant_and_run_pages(tmp_path: Path) -> None:
    runs = _runs(tmp_path / "results", ["r-01", "r-02", "r-03"])
    site = tmp_path / "site"
    index = build_board(runs, site, selection="all runs")
    assert index == site / "index.html" and "all runs" in index.read_text()
    assert (site / "style.css").is_file() and (site / "board.js").is_file()
    assert sorted(p.name for p in (site / "entrants").iterdir()) == [
        "nop-1.0-none.html",
        "oracle-1.0-none.html",
    ]
    assert sorted(p.name for p in (site / "runs").glob("*.html")) == [
        "r-01.html",
        "r-02.html",
        "r-03.html",
    ]
    assert (site / "runs" / "r-01" / "page.png").read_bytes() == PNG
    assert "&lt;script&gt;" in (site / "runs" / "r-01.html").read_text()  # the diff, escaped

    build_board(runs[:1], site)  # a smaller selection: the others' pages go
    assert sorted(p.name for p in (site / "runs").glob("*.html")) == ["r-01.html"]
    assert [p.name for p in (site / "entrants").iterdir()] == ["oracle-1.0-none.html"]


def test_screenshots_are_copied_by_name(tmp_path: Path) -> None:
    (run,) = _runs(tmp_path / "results", ["r-01"])
    (run.run_dir / "verify" / "evidence" / "notes.txt").write_text("not an image")
    shots = copy_screenshots(run, tmp_path / "site")
    assert shots == {"page.png": "r-01/page.png"}
    other = read_run(write_result(tmp_path / "results", "apps/x", "r-09", agent="nop"))
    assert other is not None and copy_screenshots(other, tmp_path / "site") == {}
