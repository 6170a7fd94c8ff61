"""opencode adapter: config (the gateway as the only provider), command, pin, exits, usage."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.agents.common import json_events
from harness.agents.opencode import (
    CONFIG,
    OpencodeAgent,
    classify,
    config,
    invocation,
    usage_from_events,
)
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
STEP = (
    '{"type":"step_finish","part":{"type":"step-finish","reason":"stop",'
    '"tokens":{"total":1214,"input":1200,"output":14,"reasoning":2,"cache":{"write":0,"read":100}},'
    '"cost":0}}'
)
OK_OUTPUT = '{"type":"step_start","part":{}}\n{"type":"text","part":{"text":"ok"}}\n' + STEP
CONTEXT = "context_window_exceeded"
ERROR = '{"type":"error","error":{"name":"APIError","data":{"message":"%s","statusCode":%d}}}'


def test_config_has_the_gateway_as_its_only_provider() -> None:
    cfg = config(GATEWAY, MODEL)
    assert cfg["model"] == f"harness/{MODEL}"
    assert cfg["enabled_providers"] == ["harness"]
    provider = cfg["provider"]["harness"]
    assert provider["npm"] == "@ai-sdk/openai-compatible"
    assert provider["options"]["baseURL"] == GATEWAY
    assert provider["options"]["apiKey"] == "{env:HARNESS_API_KEY}"
    assert list(provider["models"]) == [MODEL]
    assert cfg["autoupdate"] is False
    assert cfg["share"] == "disabled"


def test_invocation_points_only_at_the_gateway() -> None:
    inv = invocation(GATEWAY, KEY, MODEL, "fix it")
    assert_only_gateway(inv)
    assert inv.argv[:2] == ["opencode", "run"]
    assert inv.argv[inv.argv.index("--format") + 1] == "json"
    assert inv.argv[inv.argv.index("--model") + 1] == f"harness/{MODEL}"
    assert "--pure" in inv.argv and "--title" in inv.argv
    assert inv.argv[-1] == "fix it"
    assert inv.env["OPENCODE_CONFIG"] == CONFIG
    assert inv.env["OPENCODE_DISABLE_AUTOUPDATE"] == "true"
    assert inv.env["HARNESS_API_KEY"] == KEY
    assert json.loads(inv.files[CONFIG]) == config(GATEWAY, MODEL)
    assert KEY not in " ".join(inv.argv) + "".join(inv.files.values())


def test_image_installs_the_pin() -> None:
    assert_image_pins("agent-opencode", "opencode-ai", "opencode", sep="@")
    assert OpencodeAgent().image("go") == "agent-opencode-go"


@pytest.mark.parametrize(
    ("code", "timed_out", "output", "expected"),
    [
        (0, False, OK_OUTPUT, "completed"),
        (0, False, ERROR % ("Rate limit reached, too many requests", 429), "rate_limited"),
        (1, False, ERROR % ("context_length_exceeded: prompt too long", 400), CONTEXT),
        (1, False, ERROR % ("cassette exhausted", 400), "crashed"),
        (None, True, OK_OUTPUT, "timeout"),
    ],
)  # fmt: skip
def test_classify(code: int | None, timed_out: bool, output: str, expected: str) -> None:
    assert classify(ExecResult(code, output, "", 1.0, timed_out)).exit == expected


def test_usage_from_events() -> None:
    assert usage_from_events(json_events(OK_OUTPUT)) == {
        "api_calls": 1,
        "prompt_tokens": 1200,
        "cached_prompt_tokens": 100,
        "completion_tokens": 16,
        "total_tokens": 1216,
        "cost": 0.0,
    }


def test_run(tmp_path: Path) -> None:
    sandbox = FakeSandbox(ExecResult(0, OK_OUTPUT, "", 2.0))
    result = OpencodeAgent().run(make_ctx(tmp_path, sandbox))
    assert result.exit == "completed"
    assert (
        json.loads(sandbox.staged[CONFIG])["provider"]["harness"]["options"]["baseURL"] == GATEWAY
    )
