"""The scorer slot's log: each hold of an executed app's slot is a line, only when asked."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from harness.appkit.slot import scoring_slot
from harness.trial.slot_log import take_slot

pytestmark = pytest.mark.unit


def test_slot_holds_are_logged_when_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_SCORER_LOCK", str(tmp_path / "lock"))
    log = tmp_path / "slot.jsonl"
    with take_slot(True):
        time.sleep(0.05)
    assert not log.exists()  # not asked: nothing written
    monkeypatch.setenv("HARNESS_SLOT_LOG", str(log))
    for _ in range(2):
        with take_slot(True):
            time.sleep(0.05)
    with take_slot(False):  # no executed app: no hold, no line
        pass
    with scoring_slot(True):  # the app kit's lock alone is grading code: it logs nothing
        pass
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    assert len(lines) == 2 and all(x["held_s"] >= 0.04 and x["waited_s"] >= 0 for x in lines)
    assert lines[0]["began"] + lines[0]["held_s"] <= lines[1]["began"] + 0.01  # one after another
