"""The run page's trial viewer as HTML: the outcome and why, failing checks with output and
evidence links, one folded step per model call with its tool calls, commands, flags and the
log; an error run is never shown as graded; all text escaped."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.report.board.trialpage import failing_html, trial_html, why_html
from harness.report.trialview import Failing, Step, TrialView, Why

pytestmark = pytest.mark.unit


CALL = {"function": {"name": "bash", "arguments": '{"command": "ls -la"}'}}
SHOTS = ["/r/verify/evidence/page.png", "x.txt"]


def _view(**changes: object) -> TrialView:
    step = Step(
        call="c1",
        turn="turn 1",
        messages=[{"role": "user", "content": "fix <calc>"}],
        reply={"content": "ok", "tool_calls": [CALL]},
        error=None,
        tools=["bash"],
        telemetry={"prompt_tokens": 120, "completion_tokens": 8, "total_s": 1.5},
    )
    view = TrialView(
        run_dir=Path("/r"),
        steps=[step],
        commands=["ls -la", "rm -rf /tmp/<x>"],
        diff="",
        failing=[Failing("tests:./pkg", "0/3 passed", "line1\nline2", SHOTS)],
        log="trial log <here>",
        why=Why(outcome="failed", score=0.25, failing=["MUST M-1"], tokens="120 in"),
        flags=["edited conftest.py"],
    )
    for key, value in changes.items():
        setattr(view, key, value)
    return view


def test_why_comes_first_with_the_outcome_class() -> None:
    html = why_html(_view())
    assert 'class="why outcome-failed"' in html
    assert '<tr class="why-outcome"><th>outcome</th><td>FAILED  score 0.250</td></tr>' in html
    assert "<th>failing</th><td>MUST M-1</td>" in html
    assert "not verified" in why_html(_view(why=None))


def test_failing_checks_fold_their_output_and_link_their_screenshots() -> None:
    html = failing_html(_view(), {"page.png": "../shots/page.png"})
    assert "<code>tests:./pkg</code>" in html and "output (2 line(s))" in html
    assert '<a href="../shots/page.png">page.png</a>' in html and "x.txt" in html
    error = _view(why=Why(outcome="error", score=None, cause="docker died"))
    assert "never charged to the agent" in failing_html(error, {})
    assert "tests:./pkg" not in failing_html(error, {})
    assert '<p class="note">none</p>' in failing_html(_view(failing=[]), {})


def test_each_call_is_a_folded_step_and_text_is_escaped() -> None:
    html = trial_html(_view())
    assert '<details class="step" id="step-1"><summary>call 1 &middot; turn 1' in html
    assert "120 in / 8 out &middot; 1.5 s &middot; 1 tool call(s)" in html
    assert "fix &lt;calc&gt;" in html and "<calc>" not in html
    assert "2 command(s)" in html and "rm -rf /tmp/&lt;x&gt;" in html
    assert "<code>edited conftest.py</code>" in html and "trial log &lt;here&gt;" in html
    bare = trial_html(_view(steps=[], commands=[], flags=[], log=""))
    assert "no model calls recorded" in bare and "none recorded" in bare
    assert "review flags" not in bare and "trial log" not in bare
