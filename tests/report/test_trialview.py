"""The run page answers "why" in its first screen (issue 49, item 7): outcome, the
failing MUSTs or tests, the agent's exit, tokens, cost, time and host failovers above
the fold; test output folded; check statuses that agree with the scores; an ``error``
run shows its cause, not failing tests. ``harness view`` prints the same order."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.report.board.site import build_board
from harness.report.collect import collect
from harness.report.trialview import check_state, load_view, render_view
from tests.support.jobs_agents import write_result

HARM = "required behaviour broken: tests in tests:./pkg fail"


def _patch(run: Path, rel: str, **fields: Any) -> None:
    path = run / rel
    data = json.loads(path.read_text())
    data.update(fields)
    path.write_text(json.dumps(data))


def _failed_run(results: Path, outcome: str = "failed", error: str | None = None) -> Path:
    """A run with 30 failing tests of 200 output lines each, an unmet MUST, a passing
    and a failing scoring row (both status ``ok``), 817 tokens and a host failover."""
    rows = [
        {"check": "tests:./pkg", "tier": "core", "harm": HARM, "score": 0.0, "status": "ok",
         "detail": "0/30 passed", "evidence": [], "critical": False},
        {"check": "tests:./other", "tier": "core", "harm": HARM.replace("pkg", "other"),
         "score": 1.0, "status": "ok", "detail": "4/4 passed", "evidence": [], "critical": False},
    ]  # fmt: skip
    run = write_result(
        results,
        "go/thing",
        f"r-{outcome}-01",
        agent="claude",
        model="sonnet",
        outcome=outcome,
        score=0.0,
        rows=rows,
        usage={"calls": 3, "prompt_tokens": 700, "completion_tokens": 117, "cost_usd": 0.0123,
               "hosts": {"h1": 1, "h2": 3}, "failed_attempts": 1},
    )  # fmt: skip
    out = "\n".join(f"    thing_test.go:{n}: got {n}, want {n + 1}" for n in range(200))
    cases = [{"name": f"TestThing{n:02d}", "passed": False, "output": out} for n in range(30)]
    tests = [{"name": "./pkg", "passed": False, "kind": "required", "cases": cases, "output": ""}]
    _patch(run, "verify/report.json", tests=tests, unmet_musts=["M-1", "M-4"], error=error,
           rules=[], grader="GRADER TRUSTED")  # fmt: skip
    phases = [
        {"name": "setup", "duration_s": 3.2, "outcome": "ok"},
        {"name": "agent", "duration_s": 61.5, "outcome": "exited 1",
         "detail": "the agent gave up: max steps"},
        {"name": "verify", "duration_s": 9.0, "outcome": "ok"},
    ]  # fmt: skip
    _patch(run, "progress.json", phases=phases)
    gateway = run / "gateway"
    gateway.mkdir()
    lines = [
        {"call": "c1", "host": "h1", "status": 200},
        {"call": "c2", "host": "h1", "status": 503},
        {"call": "c2", "host": "h2", "status": 200},
        {"call": "c3", "host": "h2", "status": 200},
    ]
    (gateway / "telemetry.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return run


@pytest.mark.unit
def test_check_state_agrees_with_the_score() -> None:
    assert check_state({"status": "ok", "score": 0.0}) == "fail"
    assert check_state({"status": "ok", "score": 1.0}) == "pass"
    assert check_state({"status": "ok", "score": 0.5}) == "partial"
    assert check_state({"status": "ok", "score": 0.95, "tolerance": 0.1}) == "pass"
    assert check_state({"status": "vacuous", "score": 0.0}) == "vacuous"
    assert check_state({"status": "unavailable", "score": 0.0}) == "unavailable"


@pytest.mark.unit
def test_the_run_page_puts_why_first_and_folds_the_output(tmp_path: Path) -> None:
    run = _failed_run(tmp_path / "results")
    site = tmp_path / "site"
    build_board(collect(tmp_path / "results"), site)
    html = (site / "runs" / f"{run.name}.html").read_text()
    why = html.index('<section class="why')
    first = ["MUST M-1, MUST M-4", "exited 1: the agent gave up: max steps", "700 in / 117 out",
             "$0.0123", "agent 61.5 s", "call c2: h1 (503) -&gt; h2"]  # fmt: skip
    for text in first:
        assert why < html.index(text) < html.index("<h2>checks</h2>"), text
    assert html.index("<h2>failing checks</h2>") < html.index("<h2>conversation</h2>")
    assert html.count('<details class="output">') == 1  # the output is folded
    assert '<span class="status-fail">fail</span>' in html
    assert '<span class="status-pass">pass</span>' in html
    assert ">ok</span>" not in html  # "ok" (measured) is never shown as a status
    # a passing row never reads as broken: its harm is only a hover title
    assert html.count(f"<td>{HARM}</td>") == 1


@pytest.mark.unit
def test_an_error_run_shows_its_cause_not_failing_tests(tmp_path: Path) -> None:
    cause = "environment error, the baseline fails the same way: GOPROXY=off"
    run = _failed_run(tmp_path / "results", outcome="error", error=cause)
    build_board(collect(tmp_path / "results"), tmp_path / "site")
    html = (tmp_path / "site" / "runs" / f"{run.name}.html").read_text()
    assert f"<th>cause</th><td>{cause}</td>" in html
    assert "TestThing00" not in html and 'class="failing"' not in html
    assert "not graded: the run ended in an infrastructure error" in html
    text = render_view(load_view(run))
    assert f"  {'cause':<13}  {cause}" in text and "TestThing00" not in text


@pytest.mark.unit
def test_view_prints_the_same_order_as_the_page(tmp_path: Path) -> None:
    run = _failed_run(tmp_path / "results")
    text = render_view(load_view(run))
    why = [("failing", "MUST M-1, MUST M-4"), ("agent exit", "exited 1"), ("tokens", "700 in"),
           ("cost", "$0.0123"), ("time", "setup 3.2 s, agent 61.5 s, verify 9.0 s"),
           ("host failover", "call c2: h1 (503) -> h2")]  # fmt: skip
    order = ["FAILED", *(f"  {k:<13}  {v}" for k, v in why), "failing checks:", "conversation:"]
    found = [text.find(o) for o in order]
    assert -1 not in found and found == sorted(found), (found, text)


@pytest.fixture
def chromium() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        yield browser
        browser.close()


@pytest.mark.browser
def test_the_first_screen_answers_why_in_a_browser(tmp_path: Path, chromium: Any) -> None:
    run = _failed_run(tmp_path / "results")
    site = tmp_path / "site"
    build_board(collect(tmp_path / "results"), site)
    page = chromium.new_page(viewport={"width": 1280, "height": 800})
    page.goto((site / "runs" / f"{run.name}.html").as_uri())
    why = page.locator("section.why")
    box = why.bounding_box()
    assert box is not None and box["y"] + box["height"] < 800  # all of it above the fold
    for label in ("outcome", "failing", "agent exit", "tokens", "cost", "time", "host failover"):
        assert why.locator("th", has_text=label).count() == 1, label
    assert not page.locator("pre.evidence").first.is_visible()  # folded until opened
    height = page.evaluate("document.documentElement.scrollHeight")
    assert height < 5000, height  # 30 tests x 200 lines no longer unfolded
    page.screenshot(path=str(tmp_path / "run-page.png"))
    print(f"run page screenshot: {tmp_path / 'run-page.png'}")
