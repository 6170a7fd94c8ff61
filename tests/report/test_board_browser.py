"""The static board in a real browser (Debian chromium via playwright).

Synthetic results check the page types; a real job of oracle and nop over every shipped
non-smoke scenario checks that the board tells the truth: oracle on top, nop at the
bottom, eras apart. Screenshots of each page type are saved under the test's tmp dir.
"""

from __future__ import annotations

import struct
import threading
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from harness.cli.job import run_job
from harness.cli.report import serve
from harness.config.settings import Settings
from harness.job.ledger import JobDir
from harness.job.plan import JobConfig
from harness.report.board.site import build_board
from harness.report.collect import collect
from harness.scenario.load import list_scenarios, load_scenario
from tests.conftest import REPO_ROOT
from tests.support.jobs_agents import write_result
from tests.support.repo_cache import is_real_repo

pytestmark = pytest.mark.browser
#: shipped scenarios whose oracle is scored by their own tests, left out of the board's job
SCORED_ELSEWHERE = frozenset({"apps/meridian-console"})
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _png(width: int = 40, height: int = 20) -> bytes:
    """A small solid PNG, built by hand so the test needs no image library."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    raw = b"".join(b"\x00" + b"\x30\x80\xd0" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    pg = browser.new_page(viewport={"width": 1300, "height": 900})
    dialogs: list[str] = []
    pg.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    yield pg
    pg.close()
    assert dialogs == []  # escaped text never runs as script


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    site = tmp_path / "site"
    site.mkdir()
    server = serve(site, 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield site, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join()


def test_board_pages_in_a_browser(served: tuple[Path, str], page: Page, tmp_path: Path) -> None:
    site, url = served
    res = tmp_path / "results"
    shot = _png()
    entrants = {"alpha": (1.0, 4.0), "beta": (0.5, 2.0), "gamma<i>": (0.1, 8.0)}
    for n, (agent, (score, wall)) in enumerate(entrants.items()):
        for rep in range(2):
            write_result(
                res,
                "apps/x",
                f"r-{agent[:5]}-{n}{rep}",
                agent=agent,
                score=score,
                era="x@1.0.0",
                wall_s=wall,
                screenshot=shot,
                usage={
                    "calls": 3,
                    "cost_usd": 0.01 * (n + 1),
                    "hosts": {"h1": {"calls": 2}, "h2": {"calls": 1}},
                },
            )
    write_result(res, "py/a", "r-alpha-py-90", agent="alpha", score=1.0)
    build_board(collect(res), site)
    shots = tmp_path / "board-screenshots"
    shots.mkdir()

    page.goto(f"{url}/index.html")
    eras = page.locator("section.era")
    assert eras.count() == 2
    x_era = page.locator('section.era[data-era="x@1.0.0"]')
    assert x_era.locator("a.entrant").all_inner_texts() == ["alpha", "beta", "gamma<i>"]
    assert page.locator('section.era[data-era="tests@1.0.0"] a.entrant').all_inner_texts() == [
        "alpha"
    ]
    for kind in ("wall", "cost"):
        plot = x_era.locator(f"svg[id$='-{kind}']")
        assert plot.locator("circle.point").count() == 3
        assert sorted(
            plot.locator("circle.point").evaluate_all("els => els.map(e => e.dataset.entrant)")
        ) == sorted(f"{a} 1.0 + none" for a in entrants)
    assert x_era.locator("svg[id$='-wall'] circle.pareto").count() == 2  # beta, alpha
    page.screenshot(path=str(shots / "overview.png"), full_page=True)

    x_era.locator("a.entrant", has_text="alpha").click()
    assert page.locator("h1").inner_text() == "alpha 1.0 + none"
    assert page.locator(".card.run").count() == 3
    page.screenshot(path=str(shots / "entrant.png"), full_page=True)

    page.locator(".card.run a", has_text="apps/x").first.click()
    card = page.locator("article.run-card")
    checks = card.locator("table.checks tbody tr")
    assert checks.count() == 2
    assert "app.health" in checks.nth(0).inner_text()
    assert "pass" in checks.nth(0).inner_text()  # its score is 1.0: no harm shown
    harm = checks.nth(0).locator("span[title]").get_attribute("title")
    assert harm == "dead flow <b>"  # escaped, kept as text
    assert "critical (dead)" in checks.nth(0).inner_text()
    img = card.locator("img.shot")
    assert img.count() == 1
    assert img.evaluate("i => i.complete && i.naturalWidth") == 40
    card.locator("details.diff summary").click()  # the diff and arithmetic are folded
    assert "<script>alert(1)</script>" in card.locator("pre.diff").inner_text()
    card.locator("details.arithmetic summary").click()
    assert "final" in card.locator("pre.arithmetic").inner_text()
    assert card.locator("table.hosts tbody tr").count() == 2
    page.screenshot(path=str(shots / "run.png"), full_page=True)
    assert {p.name for p in shots.iterdir()} == {"overview.png", "entrant.png", "run.png"}
    print(f"board screenshots: {shots}")


@pytest.mark.integration
def test_oracle_tops_and_nop_trails_on_shipped_scenarios(
    project: Path, tmp_path: Path, page: Page
) -> None:
    root = REPO_ROOT / "scenarios"
    # real-repository scenarios have their own oracle/nop test (test_real_repo_scenarios);
    # the flagship's reference is scored by its own module (tests/apps), and at ~100 s of
    # the machine's serial app-scoring chain it would prove nothing more about the board
    scenarios = [
        s
        for s in list_scenarios(root)
        if not s.startswith("smoke/")
        and s not in SCORED_ELSEWHERE
        and not is_real_repo(load_scenario(s, root).scenario.repo)
    ]
    assert any(s.startswith("apps/") for s in scenarios)  # executed apps still on the board
    settings = Settings(
        workspace=tmp_path / "ws",
        results=tmp_path / "results",
        scenario_root=root,
        repo_cache=None,
        skip_remote=True,
        project_root=project,
    )
    config = JobConfig(agents=["oracle", "nop"], scenarios=scenarios, sandbox="local")
    outcome = run_job(config, JobDir(tmp_path / "jobs" / "truth"), settings, concurrency=2)
    assert outcome.outcomes["success"] == len(scenarios)
    assert outcome.outcomes["failed"] == len(scenarios)

    site = tmp_path / "site"
    build_board(collect(settings.results), site)
    page.goto((site / "index.html").as_uri())
    eras = page.locator("section.era")
    names = eras.evaluate_all("els => els.map(e => e.dataset.era)")
    assert len(names) >= 2 and any(n.startswith("tests@") for n in names)  # suites differ
    for i in range(eras.count()):
        agents = eras.nth(i).locator("a.entrant").all_inner_texts()
        assert agents == ["oracle", "nop"], (names[i], agents)
        assert eras.nth(i).locator("svg[id$='-wall'] circle.point").count() == 2
    page.screenshot(path=str(tmp_path / "truth-overview.png"), full_page=True)
    print(f"board screenshot: {tmp_path / 'truth-overview.png'}")
