"""Another agent's cassette is caught at call 1: a cassette names the agent it was recorded
with (the shipped ones do, ``--record`` writes it), and the gateway refuses a trial of
another agent at its first model call, as a harness fault naming both agents, before an
answer meant for another CLI is served (it used to surface at call 2 as "exhausted")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from harness.fleet.cassette import Recorder, load_interactions, recorded_agent
from harness.gateway.server import GatewayServer
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.unit

AIDER = REPO_ROOT / "tests" / "cassettes" / "aider-py-fast-solve.jsonl"
TASK = "`calc.clamp(value, low, high)` in calc/__init__.py should limit value. Fix it."


def _call(gw: GatewayServer, key: str) -> httpx.Response:
    return httpx.post(
        gw.base_url + "/chat/completions",
        json={"model": "replay", "messages": [{"role": "user", "content": TASK}]},
        headers={"Authorization": f"Bearer {key}"},
        timeout=60,
    )


def _fault(gw: GatewayServer, key: str) -> Any:
    r = httpx.get(gw.base_url + "/harness/budget", headers={"Authorization": f"Bearer {key}"})
    r.raise_for_status()
    return r.json()["fault"]


def test_another_agents_cassette_is_a_fault_at_call_1() -> None:
    with GatewayServer(replay=AIDER) as gw:
        key = gw.issue_key("t1", "mini-swe-agent", "replay")
        first = _call(gw, key)
        fault = _fault(gw, key)
    assert first.status_code == 400
    assert fault is not None and "request #1" in fault
    assert "recorded with 'aider', this trial runs 'mini-swe-agent'" in fault


def test_the_recording_agent_is_served() -> None:
    with GatewayServer(replay=AIDER) as gw:
        key = gw.issue_key("t1", "aider", "replay")
        assert _call(gw, key).status_code == 200
        assert _fault(gw, key) is None


def test_every_shipped_cassette_names_its_agent() -> None:
    agents = {"aider", "claude-code", "codex", "mini-swe-agent", "opencode", "openhands"}
    for path in sorted((REPO_ROOT / "tests" / "cassettes").glob("*.jsonl")):
        assert recorded_agent(load_interactions(path)) in agents | {"qwen-code"}, path.name


def test_a_recording_names_its_agent(tmp_path: Path) -> None:
    rec = Recorder(tmp_path / "rec.jsonl")
    rec.add("/v1/chat/completions", {"messages": []}, {"content": "hi"}, agent="aider")
    rec.close()
    line = json.loads((tmp_path / "rec.jsonl").read_text().splitlines()[0])
    assert line["agent"] == "aider"
    assert recorded_agent(load_interactions(tmp_path / "rec.jsonl")) == "aider"
