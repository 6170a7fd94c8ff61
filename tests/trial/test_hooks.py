"""trial.log (JSON Lines, one event per line) and the lifecycle hooks (harness.trial.hooks)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import InfraError
from harness.trial import hooks
from harness.trial.hooks import TrialEvent, emit, error_fields, read_log, register_hook

pytestmark = pytest.mark.unit


def test_events_are_json_lines_and_hooks_see_lifecycle_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hooks.HOOKS, "_registered", {})
    seen: list[TrialEvent] = []
    register_hook("collect", seen.append)
    emit(tmp_path, "r1", "start", scenario="py/x")
    emit(tmp_path, "r1", "gateway", url=None)  # logged, not a lifecycle event
    emit(tmp_path, "r1", "end", outcome="success", duration_s=1.5)
    log = read_log(tmp_path)
    assert [e["event"] for e in log] == ["start", "gateway", "end"]
    assert log[0]["trial"] == "r1" and log[0]["scenario"] == "py/x" and log[0]["at"]
    assert [e.event for e in seen] == ["start", "end"]
    assert seen[1].fields == {"outcome": "success", "duration_s": 1.5}


def test_a_failing_hook_is_logged_and_does_not_stop_the_trial(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hooks.HOOKS, "_registered", {})

    def broken(ev: TrialEvent) -> None:
        raise RuntimeError("plugin bug")

    register_hook("broken", broken)
    emit(tmp_path, "r1", "cancel", phase="agent")
    log = read_log(tmp_path)
    assert [e["event"] for e in log] == ["cancel", "hook-error"]
    assert log[1]["hook"] == "broken" and "plugin bug" in log[1]["error"]


def test_error_events_carry_the_one_line_cause() -> None:
    fields = error_fields("verify", InfraError("docker died", fix="restart it"), 2)
    assert fields == {
        "phase": "verify",
        "error": "docker died (fix: restart it)",
        "kind": "InfraError",
        "turn": 2,
    }
    assert error_fields("agent", OSError("disk"))["error"] == "OSError: disk"


def test_every_event_the_trial_writes_is_documented() -> None:
    source = (Path(hooks.__file__).parent / "trial.py").read_text()
    import re

    written = set(re.findall(r'self\.log\(\s*"([a-z-]+)"', source)) | {"error"}
    assert written <= set(hooks.EVENTS), written - set(hooks.EVENTS)
    assert set(hooks.LIFECYCLE) <= written
