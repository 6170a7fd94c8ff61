"""codex adapter: config (the gateway as the only provider), command, pin, exits, usage."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from harness.agents.codex import (
    CODEX_HOME,
    CodexAgent,
    classify,
    config_toml,
    invocation,
    usage_from_events,
)
from harness.agents.common import json_events
from harness.sandbox.base import ExecResult
from tests.agents.test_common import (
    GATEWAY,
    KEY,
    FakeSandbox,
    assert_image_pins,
    assert_only_gateway,
    make_ctx,
)

pytestmark = pytest.mark.unit
MODEL = "qwen/qwen3-coder-30b"
OK_OUTPUT = "\n".join(
    [
        '{"type":"thread.started","thread_id":"t1"}',
        '{"type":"turn.started"}',
        '{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"done"}}',
        '{"type":"turn.completed","usage":{"input_tokens":1200,"cached_input_tokens":200,'
        '"output_tokens":14,"reasoning_output_tokens":0}}',
    ]
)
RATE = "rate_limited"
FAILED = '{"type":"turn.failed","error":{"message":"%s"}}'


def test_config_has_the_gateway_as_its_only_provider() -> None:
    cfg = tomllib.loads(config_toml(GATEWAY, MODEL))
    assert cfg["model"] == MODEL
    assert cfg["model_provider"] == "harness"
    assert list(cfg["model_providers"]) == ["harness"]
    provider = cfg["model_providers"]["harness"]
    assert provider["base_url"] == GATEWAY
    assert provider["wire_api"] == "responses"
    assert provider["env_key"] == "HARNESS_API_KEY"
    assert cfg["approval_policy"] == "never"
    assert cfg["check_for_update_on_startup"] is False
    assert cfg["analytics"]["enabled"] is False


def test_invocation_points_only_at_the_gateway() -> None:
    inv = invocation(GATEWAY, KEY, MODEL, "fix it")
    assert_only_gateway(inv)
    assert inv.argv[:2] == ["codex", "exec"]
    assert {"--json", "--skip-git-repo-check", "--strict-config"} <= set(inv.argv)
    assert inv.argv[-1] == "fix it"
    assert inv.env["CODEX_HOME"] == CODEX_HOME
    assert inv.env["HARNESS_API_KEY"] == KEY
    assert KEY not in " ".join(inv.argv) + "".join(inv.files.values())
    assert f"{CODEX_HOME}/config.toml" in inv.files


def test_image_installs_the_pin() -> None:
    assert_image_pins("agent-codex", "@openai/codex", "codex", sep="@")
    assert CodexAgent().image("go") == "agent-codex-go"


@pytest.mark.parametrize(
    ("code", "timed_out", "output", "expected"),
    [
        (0, False, OK_OUTPUT, "completed"),
        (1, False, FAILED % "exceeded retry limit, last status: 429 Too Many Requests", RATE),
        (
            1,
            False,
            FAILED % "Your input exceeds the context window of this model.",
            "context_window_exceeded",
        ),
        (0, False, FAILED % "stream disconnected before completion", "crashed"),
        (None, True, '{"type":"turn.started"}', "timeout"),
    ],
)  # fmt: skip
def test_classify(code: int | None, timed_out: bool, output: str, expected: str) -> None:
    assert classify(ExecResult(code, output, "", 1.0, timed_out)).exit == expected


def test_usage_from_events() -> None:
    assert usage_from_events(json_events(OK_OUTPUT)) == {
        "prompt_tokens": 1200,
        "cached_prompt_tokens": 200,
        "completion_tokens": 14,
        "total_tokens": 1214,
    }
    assert usage_from_events([]) == {}


def test_run_stages_the_config_outside_the_workspace(tmp_path: Path) -> None:
    sandbox = FakeSandbox(ExecResult(0, OK_OUTPUT, "", 3.0))
    ctx = make_ctx(tmp_path, sandbox)
    result = CodexAgent().run(ctx)
    assert result.exit == "completed"
    assert result.self_reported_usage["total_tokens"] == 1214
    assert tomllib.loads(sandbox.staged[f"{CODEX_HOME}/config.toml"])["model"] == MODEL
