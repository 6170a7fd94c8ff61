"""The trial viewer: ``harness view RUN`` prints the conversation with tokens, time,
commands and failing checks, and the board's run page steps through it in a real browser
(Debian's chromium)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from tests.gateway.test_trial_gateway import AGENT, LLM, cassette
from tests.support.calc import add_entrants, harness, write_calc


@pytest.fixture(scope="module")
def wrong_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A local trial whose (cassette) agent breaks calc.add: one call, a failing test."""
    tmp = tmp_path_factory.mktemp("viewer")
    project = tmp / "project"
    (project / "scenarios").mkdir(parents=True)
    for name in ("agents.yml", "llms.yml"):
        (project / name).write_text((REPO_ROOT / name).read_text())
    add_entrants(project, AGENT, LLM)
    write_calc(project, tmp / "src", environment=None)
    tape = cassette(tmp / "wrong.jsonl", "sed -i 's/a - b/a * b/' calc.py")
    done = harness(
        project,
        *("exec", "--agent", "toolcall", "--model", "replay-test", "--sandbox", "local"),
        *("--replay", str(tape), "t/calc"),
    )
    assert done.returncode == 1, done.stdout + done.stderr
    (run,) = [p for p in (project / "results" / "t" / "calc").iterdir() if p.is_dir()]
    return run


@pytest.mark.integration
def test_view_prints_the_conversation_commands_and_failing_checks(wrong_run: Path) -> None:
    lines = (wrong_run / "gateway" / "transcript.jsonl").read_text().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["reply"]["tool_calls"]
    project = wrong_run.parents[3]
    done = harness(project, "view", wrong_run.name)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.splitlines()[1] == "t/calc  toolcall + replay-test: FAILED  score 0.0"
    assert "-- call 1 (turn-1" in out and "120 in / 30 out" in out
    assert "[user] please fix add in calc.py" in out
    assert "[tool call] sed -i 's/a - b/a * b/' calc.py" in out
    assert "$ sed -i 's/a - b/a * b/' calc.py" in out  # the commands list
    assert "x test_hidden_calc.py" in out and "assert" in out  # the failing test's output
    assert "diff: 1 file(s) changed" in out
    missing = harness(project, "view", "no-such-run")
    assert missing.returncode == 2 and "no run 'no-such-run'" in missing.stderr


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    from harness.cli.report import serve

    folder = tmp_path / "site"
    folder.mkdir()
    server = serve(folder, 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield folder, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join()


@pytest.mark.browser
def test_run_page_steps_through_the_trial_in_a_browser(
    wrong_run: Path, site: tuple[Path, str], tmp_path: Path
) -> None:
    from playwright.sync_api import sync_playwright

    from harness.report.board.site import build_board
    from harness.report.collect import collect

    folder, url = site
    build_board(collect(wrong_run.parents[2]), folder)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.goto(f"{url}/runs/{wrong_run.name}.html")
            step = page.locator("details.step#step-1")
            assert step.count() == 1
            summary = step.locator("summary").inner_text()
            assert "call 1" in summary and "120 in / 30 out" in summary and "1 tool call" in summary
            tool = step.locator("pre.tool-call")
            assert not tool.is_visible()  # folded until the reader steps into it
            step.locator("summary").click()
            assert tool.is_visible() and "a * b" in tool.inner_text()
            assert "please fix add" in step.locator(".role-user").inner_text()
            assert page.locator("ol.commands li").count() == 1
            failing = page.locator(".failing", has_text="test_hidden_calc.py")
            assert failing.count() >= 1
            output = failing.first.locator("pre")
            assert not output.is_visible()  # the test output is folded
            failing.first.locator("details.output summary").click()
            assert "assert" in output.inner_text()
            page.screenshot(path=str(tmp_path / "run-page.png"), full_page=True)
        finally:
            browser.close()


@pytest.mark.unit
def test_a_json_tool_result_is_shown_as_its_output() -> None:
    from harness.report.trialview import _text

    sent = json.dumps({"returncode": 2, "output": "x <y> 'z'\n"})
    assert _text(sent) == "(exit 2) x <y> 'z'\n"
    assert _text('{"not": "a tool result"}') == '{"not": "a tool result"}'
    assert _text("{output broken") == "{output broken"
