"""Claude Code adapter: settings outside the workspace, the gateway as its only address,
the pin, exits and its own usage account."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.agents.claude import (
    CONFIG_DIR,
    ClaudeCodeAgent,
    classify,
    gateway_root,
    invocation,
    usage_from_result,
)
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


def result_line(**fields: object) -> str:
    base = {
        "type": "result", "subtype": "success", "is_error": False, "num_turns": 3,
        "result": "Fixed.",
        "usage": {"input_tokens": 1000, "cache_read_input_tokens": 200,
                  "cache_creation_input_tokens": 0, "output_tokens": 40},
    }  # fmt: skip
    return json.dumps({**base, **fields})


OK = '{"type":"system","subtype":"init"}\n' + result_line()


def test_invocation_points_only_at_the_gateway() -> None:
    inv = invocation(GATEWAY, KEY, MODEL, "fix it")
    assert_only_gateway(inv)
    assert inv.argv[:2] == ["claude", "-p"] and inv.argv[-1] == "fix it"
    assert {"--dangerously-skip-permissions", "--verbose"} <= set(inv.argv)
    assert inv.argv[inv.argv.index("--output-format") + 1] == "stream-json"
    assert inv.argv[inv.argv.index("--model") + 1] == MODEL
    env = inv.env
    assert env["ANTHROPIC_BASE_URL"] == "http://harness-gw-1a2b:8080"  # it adds /v1/messages
    assert env["ANTHROPIC_API_KEY"] == KEY and KEY not in " ".join(inv.argv)
    assert env["CLAUDE_CONFIG_DIR"] == CONFIG_DIR and CONFIG_DIR.startswith("/tmp/")
    for var in ("ANTHROPIC_MODEL", "ANTHROPIC_SMALL_FAST_MODEL", "ANTHROPIC_DEFAULT_HAIKU_MODEL"):
        assert env[var] == MODEL  # no hard-coded Anthropic model names reach the gateway
    assert env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"
    assert env["DISABLE_AUTOUPDATER"] == "1" and env["DISABLE_TELEMETRY"] == "1"
    settings = json.loads(inv.files[f"{CONFIG_DIR}/settings.json"])
    assert settings["autoUpdates"] is False
    assert gateway_root("http://gw:1/v1/") == "http://gw:1"
    assert gateway_root("http://gw:1") == "http://gw:1"


def test_image_installs_the_pin() -> None:
    body = "\n".join(dockerfile_body("agent-claude"))
    assert f'"@anthropic-ai/claude-code@{pinned("claude-code")}"' in body
    assert dockerfile_body("agent-claude") == dockerfile_body("agent-claude-go")
    images = REPO_ROOT / "images"
    assert "agent-node-go" in (images / "agent-claude-go" / "image.yml").read_text()
    assert "env-go" in (images / "agent-node-go" / "image.yml").read_text()
    assert "env-python" in (images / "agent-node" / "image.yml").read_text()
    assert ClaudeCodeAgent().image("go") == "agent-claude-go"
    assert ClaudeCodeAgent().image("python") == "agent-claude"


@pytest.mark.parametrize(
    ("code", "timed_out", "output", "expected"),
    [
        (0, False, OK, "completed"),
        (1, False, result_line(is_error=True, api_error="max_output_tokens"), "crashed"),
        (1, False, result_line(is_error=True, result="API Error: 429 rate_limit_error"),
         "rate_limited"),
        (1, False, result_line(is_error=True, result="API Error: 429 {\"type\":\"error\","
         "\"error\":{\"type\":\"budget_exceeded\"}}"), "budget"),
        (1, False, result_line(is_error=True, result="Prompt is too long"),
         "context_window_exceeded"),
        (0, False, result_line(subtype="error_max_turns"), "crashed"),
        (None, True, '{"type":"system"}', "timeout"),
        (137, False, "", "crashed"),
    ],
)  # fmt: skip
def test_classify(code: int | None, timed_out: bool, output: str, expected: str) -> None:
    assert classify(ExecResult(code, output, "", 1.0, timed_out)).exit == expected


def test_usage_from_result() -> None:
    usage = usage_from_result(json.loads(result_line()))
    assert usage == {
        "prompt_tokens": 1200,
        "cached_prompt_tokens": 200,
        "completion_tokens": 40,
        "total_tokens": 1240,
        "turns": 3,
    }
    assert usage_from_result({}) == {}


def test_run_stages_settings_outside_the_workspace(tmp_path: Path) -> None:
    sandbox = FakeSandbox(ExecResult(0, OK, "", 3.0))
    result = ClaudeCodeAgent().run(make_ctx(tmp_path, sandbox))
    assert result.exit == "completed" and result.self_reported_usage["total_tokens"] == 1240
    assert f"{CONFIG_DIR}/settings.json" in sandbox.staged
