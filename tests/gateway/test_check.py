"""``harness fleet check``: each model probed with each agent's protocol, a works /
degraded / fails verdict per pair with its reasons, and ``harness exec``/``run`` refuse a
pair found to fail unless ``--allow-failing-pairs``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from harness.errors import UserError
from harness.gateway import check
from harness.gateway.check import (
    CHECK_FILE,
    DEGRADED,
    FAILS,
    WORKS,
    Probe,
    known_failing,
    run_probe,
    save_check,
    verdicts,
)
from tests.conftest import REPO_ROOT
from tests.gateway.test_trial_gateway import AGENT, LLM
from tests.support.calc import add_entrants, harness, write_calc


def _post(status: int, body: dict[str, Any] | str) -> check.Post:
    def post(path: str, _body: dict[str, Any], _stream: bool) -> httpx.Response:
        if isinstance(body, str):
            return httpx.Response(status, text=body)
        return httpx.Response(status, json=body)

    return post


@pytest.mark.unit
def test_each_probe_tells_works_degraded_and_fails_apart() -> None:
    tool_call = {"choices": [{"message": {"tool_calls": [{"function": {"name": "bash"}}]}}]}
    text = {"choices": [{"message": {"content": "I would run ls"}}]}
    assert run_probe("chat_tools", _post(200, tool_call), "m").level == WORKS
    plain = run_probe("chat_tools", _post(200, text), "m")
    assert plain.level == DEGRADED and "no tool_calls" in plain.reason
    context = {"error": {"message": "request (9000 tokens) exceeds the available context"}}
    long = run_probe("long_8k", _post(400, context), "m")
    assert long.level == FAILS and "HTTP 400" in long.reason and "exceeds" in long.reason
    assert run_probe("responses_tools", _post(404, "Not Found"), "m").level == FAILS
    fc = {"output": [{"type": "function_call", "name": "bash"}]}
    assert run_probe("responses_tools", _post(200, fc), "m").level == WORKS
    use = {"content": [{"type": "tool_use", "name": "bash", "input": {}}]}
    assert run_probe("messages_tools", _post(200, use), "m").level == WORKS
    no_usage = 'data: {"choices":[{"delta":{"content":"ok"}}]}\n\ndata: [DONE]\n'
    streamed = run_probe("chat_stream", _post(200, no_usage), "m")
    assert streamed.level == DEGRADED and "usage" in streamed.reason
    assert run_probe("chat_stream", _post(200, "garbage"), "m").level == FAILS


@pytest.mark.unit
def test_a_pair_is_its_agents_worst_probe_with_the_reasons() -> None:
    probes = {
        ("m", "chat_tools"): Probe(DEGRADED, "text, no tool_calls"),
        ("m", "long_8k"): Probe(FAILS, "context exceeded"),
        ("m", "chat_stream"): Probe(WORKS, "streamed with usage"),
    }
    got = {v.agent: v for v in verdicts(["aider", "mini-swe-agent", "openhands"], ["m"], probes)}
    assert got["aider"].level == WORKS and got["aider"].reasons == []
    assert got["mini-swe-agent"].level == DEGRADED
    assert got["openhands"].level == FAILS
    assert got["openhands"].reasons == [
        "chat_tools: text, no tool_calls",
        "long_8k: context exceeded",
    ]


def _stored(project: Path, agent: str, model: str, level: str) -> Path:
    pair = {"agent": agent, "model": model, "level": level, "reasons": ["long_8k: too long"]}
    return save_check(project / CHECK_FILE, {"checked_at": "t", "probes": {}, "pairs": [pair]})


@pytest.mark.unit
def test_a_later_check_replaces_a_pairs_verdict(tmp_path: Path) -> None:
    path = _stored(tmp_path, "aider", "m", FAILS)
    assert known_failing(path, "aider", "m") is not None
    assert known_failing(path, "aider", "other") is None
    _stored(tmp_path, "codex", "m", WORKS)
    _stored(tmp_path, "aider", "m", WORKS)
    assert known_failing(path, "aider", "m") is None
    assert {p["agent"] for p in json.loads(path.read_text())["pairs"]} == {"aider", "codex"}


@pytest.mark.integration
def test_exec_refuses_a_pair_known_to_fail_unless_told(project: Path, tmp_path: Path) -> None:
    write_calc(project, tmp_path / "src", environment="{image: python, agent-timeout: 60s}")
    add_entrants(project, AGENT, LLM)
    _stored(project, "toolcall", "replay-test", FAILS)
    args = ("exec", "--agent", "toolcall", "--model", "replay-test", "--sandbox", "local")
    refused = harness(project, *args, "t/calc")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "fleet check" in refused.stderr and "--allow-failing-pairs" in refused.stderr
    assert not (project / "results").exists() or not any((project / "results").rglob("*.json"))
    job = harness(
        project, "run", "--agents", "toolcall", "--models", "replay-test", "--scenarios", "t/calc"
    )
    assert job.returncode == 2 and "--allow-failing-pairs" in job.stderr
    told = harness(project, *args, "--allow-failing-pairs", "t/calc")
    # past the refusal: this model needs a fleet, and there is none (the next check)
    assert told.returncode == 2 and "fleet check" not in told.stderr, told.stderr


@pytest.mark.unit
def test_unknown_agents_are_named() -> None:
    from harness.fleet.config import parse_fleet

    with pytest.raises(UserError, match="goose"):
        check.check_fleet(parse_fleet({"hosts": []}), ["goose"])


@pytest.mark.docker
@pytest.mark.engine
@pytest.mark.integration
def test_fleet_check_names_the_pairs_the_built_in_model_fails(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    for name in ("agents.yml", "llms.yml"):
        (project / name).write_text((REPO_ROOT / name).read_text())
    done = harness(project, "fleet", "check", "--agents", "aider,claude-code", timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    stored = json.loads((project / CHECK_FILE).read_text())
    pairs = {p["agent"]: p for p in stored["pairs"]}
    assert pairs["aider"]["level"] == WORKS  # a plain streamed chat with usage
    # claude-code sends ~16k tokens of system prompt and tools: beyond 8,192 of context
    assert pairs["claude-code"]["level"] == FAILS
    assert any("context" in r for r in pairs["claude-code"]["reasons"]), pairs["claude-code"]
    assert "claude-code" in done.stdout and "fails" in done.stdout
