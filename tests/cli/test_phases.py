"""``harness exec`` says each phase of its trial on stderr (a trial runs for minutes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli.phases import phase_line
from harness.trial.hooks import TrialEvent

pytestmark = pytest.mark.unit


def test_phase_lines_name_the_phase_and_the_log() -> None:
    run = Path("/r/py/x/run-1")

    def line(event: str, **fields: object) -> str | None:
        return phase_line(TrialEvent(event, "run-1", run, dict(fields)))

    start = line("agent-start", turn=1, agent="mini", model="replay", sandbox="docker")
    assert (
        start
        == "harness: agent mini + replay turn 1 running (docker); log: /r/py/x/run-1/trial.log"
    )
    end = line("agent-end", turn=1, exit="completed", usage={"calls": 3})
    assert end == "harness: agent turn 1 ended: completed; 3 model call(s)"
    assert (
        line("agent-end", turn=2, exit="timeout", usage={})
        == "harness: agent turn 2 ended: timeout"
    )
    assert (
        line("verify-start", sandbox="local", scorer="tests") == "harness: verifying (local, tests)"
    )
    assert line("end", outcome="success") is None  # the report says it
