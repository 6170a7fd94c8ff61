"""qwen-code adapter: settings outside the workspace, the gateway as its only address,
no background model calls, the pin, exits and its own usage account."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.agents.qwen import QWEN_HOME, QwenCodeAgent, classify, invocation, usage_from_result
from harness.sandbox.base import ExecResult
from tests.agents.test_common import (
    GATEWAY,
    KEY,
    FakeSandbox,
    assert_only_gateway,
    dockerfile_body,
    make_ctx,
    pinned,
)
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.unit
MODEL = "qwen/qwen3-coder-30b"
OK = "\n".join(
    [
        '{"type":"system","subtype":"init","session_id":"s"}',
        '{"type":"result","subtype":"success","is_error":false,"num_turns":2,"result":"done",'
        '"usage":{"input_tokens":8483,"output_tokens":20,"cache_read_input_tokens":0,'
        '"total_tokens":8503}}',
    ]
)
FAIL = (
    '{"type":"result","subtype":"error_during_execution","is_error":true,'
    '"result":"%s","usage":{"input_tokens":1,"output_tokens":0}}'
)


def test_invocation_points_only_at_the_gateway() -> None:
    inv = invocation(GATEWAY, KEY, MODEL, "fix it")
    assert_only_gateway(inv)
    assert inv.argv[0] == "qwen" and inv.argv[-2:] == ["--prompt", "fix it"]
    assert {"--yolo", "--output-format", "stream-json"} <= set(inv.argv)
    assert inv.env["OPENAI_BASE_URL"] == GATEWAY
    assert inv.env["OPENAI_API_KEY"] == KEY and KEY not in " ".join(inv.argv)
    assert inv.env["QWEN_HOME"] == QWEN_HOME and QWEN_HOME.startswith("/tmp/")
    settings = json.loads(inv.files[f"{QWEN_HOME}/settings.json"])
    assert settings["security"]["auth"]["selectedType"] == "openai"
    assert settings["model"]["name"] == MODEL
    assert not any(settings["memory"].values())  # no memory-extraction model calls
    assert settings["general"]["enableAutoUpdate"] is False
    assert settings["privacy"]["usageStatisticsEnabled"] is False


def test_image_installs_the_pin() -> None:
    body = "\n".join(dockerfile_body("agent-qwen"))
    assert f'"@qwen-code/qwen-code@{pinned("qwen-code")}"' in body
    assert dockerfile_body("agent-qwen") == dockerfile_body("agent-qwen-go")
    assert "agent-node-go" in (REPO_ROOT / "images" / "agent-qwen-go" / "image.yml").read_text()
    assert QwenCodeAgent().image("go") == "agent-qwen-go"


@pytest.mark.parametrize(
    ("code", "timed_out", "output", "expected"),
    [
        (0, False, OK, "completed"),
        (1, False, FAIL % "429 Too Many Requests", "rate_limited"),
        (1, False, FAIL % "429 budget_exceeded: this trial's budget is spent", "budget"),
        (1, False, FAIL % "maximum context length is 32768 tokens", "context_window_exceeded"),
        (0, False, FAIL % "Connection error.", "crashed"),
        (None, True, "", "timeout"),
        (55, False, "max wall time exceeded", "crashed"),
    ],
)  # fmt: skip
def test_classify(code: int | None, timed_out: bool, output: str, expected: str) -> None:
    assert classify(ExecResult(code, output, "", 1.0, timed_out)).exit == expected


def test_usage_from_result() -> None:
    result = json.loads(OK.splitlines()[-1])
    assert usage_from_result(result) == {
        "prompt_tokens": 8483,
        "cached_prompt_tokens": 0,
        "completion_tokens": 20,
        "total_tokens": 8503,
        "turns": 2,
    }


def test_run_stages_settings_outside_the_workspace(tmp_path: Path) -> None:
    sandbox = FakeSandbox(ExecResult(0, OK, "", 3.0))
    result = QwenCodeAgent().run(make_ctx(tmp_path, sandbox))
    assert result.exit == "completed" and result.self_reported_usage["total_tokens"] == 8503
    assert f"{QWEN_HOME}/settings.json" in sandbox.staged
