"""The backend seam: a third backend is one class and one registration; one verdict."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from harness import backends
from harness.backends import backend_names, check_backend, get_backend, register_backend
from harness.backends.local import LocalBackend
from harness.config.entrants import Registry
from harness.config.settings import Settings
from harness.errors import UserError
from harness.scenario.load import load_scenario
from harness.trial.commands import execute
from harness.trial.entrant import RunOptions
from harness.trial.hooks import read_log
from harness.trial.trial import Trial
from harness.verify.outcome import TargetResult, VerifyOutcome
from harness.verify.outcome import TestCase as Case
from harness.verify.rules import RuleResult
from harness.verify.verdict import decide
from tests.cli.test_cli_errors import calc  # noqa: F401  (the fixture)


class CountingBackend(LocalBackend):
    """The host backend under another name, counting what the trial asks of it."""

    name = "counting"
    calls: Counter[str] = Counter()

    def sandbox(self, spec: Any) -> Any:
        self.calls[f"sandbox:{spec.phase}"] += 1
        return super().sandbox(spec)

    def agent_version(self, agent: Any) -> str:
        self.calls["agent_version"] += 1
        return super().agent_version(agent)

    def verify(self, spec: Any) -> Any:
        self.calls["verify"] += 1
        return super().verify(spec)


@pytest.mark.integration
def test_a_registered_backend_runs_a_whole_trial(
    project: Path,
    calc: tuple[Path, str],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(backends.BACKENDS, "_registered", {})  # forgotten after the test
    register_backend("counting", CountingBackend)
    CountingBackend.calls.clear()
    monkeypatch.setenv("HARNESS_SCENARIO_ROOT", str(project / "scenarios"))
    settings = Settings.from_env(project)
    loaded = load_scenario("t/calc", settings.scenario_root)
    opts = RunOptions(agent="oracle", sandbox="counting")
    result = execute(loaded, settings, Registry.load(project), opts)
    assert result.outcome == "success", result.text
    assert CountingBackend.calls == {"agent_version": 1, "sandbox:agent": 1, "verify": 1}
    trial = Trial.open(loaded, settings, "counting")  # the separate commands see the run
    assert trial.meta is not None and trial.meta.sandbox == "counting"
    assert trial.meta.agent == "oracle" and trial.run is not None
    assert trial.run.path == result.run_dir
    assert "counting" in backend_names()
    events = [e["event"] for e in read_log(result.run_dir)]  # trial.log, phase by phase
    assert events == [
        "start", "setup", "agent-start", "gateway", "agent-end", "verify-start", "verdict", "end"
    ]  # fmt: skip


@pytest.mark.unit
def test_unknown_backend_is_refused() -> None:
    with pytest.raises(UserError, match="unknown sandbox 'vm'") as err:
        check_backend("vm")
    assert err.value.field == "--sandbox"
    with pytest.raises(UserError):
        get_backend("vm")


def _outcome(**over: Any) -> VerifyOutcome:
    ok = TargetResult(target="t", kind="required", tests=[Case(name="a", passed=True)])
    fields: dict[str, Any] = {
        "success": False,
        "partial_score": None,
        "rules": [RuleResult(rule="must-modify", entry="x", ok=True, detail="")],
        "targets": [ok],
        "changed_files": ["x"],
        "hidden_files": [],
        "score": {"final": 1.0, "measurable": True},
    }
    return VerifyOutcome(**{**fields, **over})


@pytest.mark.unit
@pytest.mark.parametrize(
    ("over", "agent", "success", "word"),
    [
        ({}, None, True, "success"),
        ({}, "completed", True, "success"),
        ({}, "timeout", True, "timeout"),
        ({}, "error", True, "error"),
        ({"error": "docker died"}, None, False, "error"),
        ({"targets": []}, None, False, "failed"),  # nothing was tested: not a pass
        ({"partial_score": 0.5}, None, False, "failed"),
        ({"bar": 0.9, "targets": []}, None, True, "success"),  # a suite reaching its bar
        ({"bar": 0.9, "score": {"final": 0.8, "measurable": True}}, None, False, "failed"),
        ({"bar": 0.5, "score": {"final": 0.9, "measurable": False}}, None, False, "failed"),
        (
            {"rules": [RuleResult(rule="no-modify", entry="t", ok=False, detail="")]},
            None,
            False,
            "failed",
        ),
    ],
)
def test_decide(over: dict[str, Any], agent: str | None, success: bool, word: str) -> None:
    verdict = decide(_outcome(**over), agent)
    assert (verdict.success, verdict.outcome) == (success, word)
