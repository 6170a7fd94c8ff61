"""The entrant's checks before anything is written: secrets masked in run.json, a pair the
fleet check found failing refused, and a model refused without a way to reach it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.config.entrants import LLMEntry
from harness.config.settings import Settings
from harness.errors import UserError
from harness.gateway.check import CHECK_FILE, FAILS
from harness.trial.entrant import RunOptions, agent_extras, model_access, refuse_failing_pair

pytestmark = pytest.mark.unit


def _settings(tmp_path: Path) -> Settings:
    return Settings(
        project_root=tmp_path,
        workspace=tmp_path / "ws",
        results=tmp_path / "results",
        scenario_root=tmp_path / "scenarios",
    )


def test_run_json_records_extras_with_secrets_masked() -> None:
    opts = RunOptions(
        agent="codex",
        agent_env={"OPENAI_API_KEY": "sk-1", "gh_token": "t", "DEBUG": "1"},
        agent_args=("--fast",),
    )
    assert agent_extras(opts) == {
        "agent_env": {"OPENAI_API_KEY": "***", "gh_token": "***", "DEBUG": "1"},
        "agent_args": ["--fast"],
    }
    assert agent_extras(RunOptions(agent="codex")) == {}


def test_a_pair_the_fleet_check_failed_is_refused_unless_allowed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = _settings(tmp_path)
    check = tmp_path / CHECK_FILE
    check.parent.mkdir(parents=True)
    pair = {"agent": "codex", "model": "m", "level": FAILS, "reasons": ["no tool calls"]}
    check.write_text(json.dumps({"pairs": [pair]}))
    with pytest.raises(UserError, match="codex \\+ m fails: no tool calls") as info:
        refuse_failing_pair(settings, "codex", "m", allow=False)
    assert info.value.field == "codex x m"
    refuse_failing_pair(settings, "codex", "other", allow=False)  # another pair runs
    refuse_failing_pair(settings, "codex", "m", allow=True)
    monkeypatch.setenv("HARNESS_ALLOW_FAILING_PAIRS", "1")
    refuse_failing_pair(settings, "codex", "m", allow=False)


def test_a_model_needs_a_way_to_be_reached(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    opts = RunOptions(agent="mini")
    assert model_access(LLMEntry(name="none", model="none"), opts, settings) is None
    with pytest.raises(UserError, match="only replays a recorded cassette") as info:
        model_access(LLMEntry(name="replay", model="replay"), opts, settings)
    assert info.value.field == "--replay"
    missing = RunOptions(agent="mini", replay=tmp_path / "absent.jsonl")
    with pytest.raises(UserError, match="cassette not found"):
        model_access(LLMEntry(name="m", model="m"), missing, settings)
    cassette = tmp_path / "c.jsonl"
    cassette.write_text("")
    replayed = RunOptions(agent="mini", replay=cassette)
    assert model_access(LLMEntry(name="m", model="m"), replayed, settings) is None
    with pytest.raises(UserError, match="no fleet file") as info:
        model_access(LLMEntry(name="m", model="m"), opts, settings)
    assert info.value.field == "hosts"
