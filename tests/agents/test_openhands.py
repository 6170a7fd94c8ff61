"""OpenHands adapter: the gateway as its only address, state outside the workspace, the
pin (on trixie's Python 3.13 beside bookworm's), exits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.agents.openhands import STATE, OpenHandsAgent, classify, invocation
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


def test_invocation_points_only_at_the_gateway() -> None:
    inv = invocation(GATEWAY, KEY, MODEL, "fix it")
    assert_only_gateway(inv)
    assert inv.argv[0] == "openhands" and inv.argv[-2:] == ["-t", "fix it"]
    assert {"--headless", "--json", "--override-with-envs"} <= set(inv.argv)
    assert inv.env["LLM_MODEL"] == f"openai/{MODEL}"
    assert inv.env["LLM_BASE_URL"] == GATEWAY and inv.env["LLM_API_KEY"] == KEY
    assert KEY not in " ".join(inv.argv)
    assert inv.env["GIT_CONFIG_VALUE_1"] == "https://"  # git remotes rewritten, never fetched
    assert inv.env["GIT_CONFIG_KEY_0"] == "safe.directory"  # base_env's entry is kept
    assert STATE.startswith("/tmp/") and inv.env["HOME"] in STATE


@pytest.mark.parametrize(
    ("code", "timed_out", "output", "expected"),
    [
        (0, False, '{"type": "action"}\n{"type": "finish"}', "completed"),
        (0, False, '{"type": "error", "message": "Connection error"}', "crashed"),
        (1, False, "litellm.RateLimitError: 429", "rate_limited"),
        (1, False, "ContextWindowExceededError", "context_window_exceeded"),
        (None, True, "", "timeout"),
    ],
)
def test_classify(code: int | None, timed_out: bool, output: str, expected: str) -> None:
    assert classify(ExecResult(code, output, "", 1.0, timed_out)).exit == expected


def test_image_installs_the_pin() -> None:
    body = "\n".join(dockerfile_body("agent-openhands"))
    assert f'"openhands=={pinned("openhands")}"' in body
    assert dockerfile_body("agent-openhands") == dockerfile_body("agent-openhands-go")
    assert "env-go" in (REPO_ROOT / "images" / "agent-openhands-go" / "image.yml").read_text()
    assert OpenHandsAgent().image("go") == "agent-openhands-go"


def test_run_with_a_fake_sandbox(tmp_path: Path) -> None:
    sandbox = FakeSandbox(ExecResult(0, '{"type": "finish"}\n', "", 1.0))
    result = OpenHandsAgent().run(make_ctx(tmp_path, sandbox))
    assert result.exit == "completed"
    execs = [c[1] for c in sandbox.calls if c[0] == "exec"]
    assert "calc.clamp" in execs[0]["cmd"][-1]


def test_usage_from_the_conversation_state(tmp_path: Path) -> None:
    conv = tmp_path / "openhands-conversations" / "abc"
    conv.mkdir(parents=True)
    usage = {"prompt_tokens": 3489, "completion_tokens": 5, "cache_read_tokens": 100}
    stats = {"usage_to_metrics": {
        "agent": {"accumulated_token_usage": usage, "token_usages": [usage]},
        "condenser": {"accumulated_token_usage": {"prompt_tokens": 0}, "token_usages": []},
    }}  # fmt: skip
    (conv / "base_state.json").write_text(json.dumps({"stats": stats}))
    result = classify(ExecResult(0, "", "", 1.0), tmp_path)
    assert result.self_reported_usage == {
        "api_calls": 1,
        "prompt_tokens": 3489,
        "cached_prompt_tokens": 100,
        "completion_tokens": 5,
        "total_tokens": 3494,
    }
