"""aider adapter: command, environment, pin, exit classification, usage."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.agents.aider import (
    CACHE_DIRS,
    TASK,
    AiderAgent,
    classify,
    invocation,
    usage_from_output,
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
OK_OUTPUT = """Aider v0.86.2
Model: openai/qwen/qwen3-coder-30b with diff edit format
Git repo: .git with 2 files
Tokens: 900 sent, 80 received.
Applied edit to calc/__init__.py
Tokens: 2.5k sent, 1.2k cache hit, 1.1k received.
"""


def test_invocation_points_only_at_the_gateway() -> None:
    inv = invocation(GATEWAY, KEY, MODEL, "fix it\n")
    assert_only_gateway(inv)
    argv = inv.argv
    assert argv[argv.index("--model") + 1] == f"openai/{MODEL}"
    assert argv[argv.index("--openai-api-base") + 1] == GATEWAY
    assert argv[argv.index("--message-file") + 1] == TASK
    assert inv.files[TASK] == "fix it\n"
    assert {"--yes-always", "--no-auto-commits", "--no-gitignore", "--analytics-disable"} <= set(
        argv
    )
    assert "--no-check-update" in argv
    assert inv.env["OPENAI_API_KEY"] == KEY
    assert KEY not in " ".join(argv)
    for flag in ("--chat-history-file", "--llm-history-file", "--input-history-file"):
        assert argv[argv.index(flag) + 1].startswith("/tmp/harness-agent/")
    assert inv.cleanup == CACHE_DIRS


def test_image_installs_the_pin() -> None:
    assert_image_pins("agent-aider", "aider-chat", "aider")
    assert AiderAgent().image("go") == "agent-aider-go"


@pytest.mark.parametrize(
    ("code", "timed_out", "output", "expected"),
    [
        (0, False, OK_OUTPUT, "completed"),
        (0, False, "litellm.APIConnectionError: OpenAIException - Connection error.\n", "crashed"),
        (
            0,
            False,
            "litellm.ContextWindowExceededError: prompt too long\n"
            "The chat session is larger than the context window!\n",
            "context_window_exceeded",
        ),
        (1, False, "litellm.RateLimitError: 429 rate limit\nGiving up.\n", "rate_limited"),
        (None, True, "Tokens: 900 sent, 80 received.\n", "timeout"),
    ],
)
def test_classify(code: int | None, timed_out: bool, output: str, expected: str) -> None:
    assert classify(ExecResult(code, output, "", 1.0, timed_out)).exit == expected


def test_usage_from_output() -> None:
    assert usage_from_output(OK_OUTPUT) == {
        "api_calls": 2,
        "prompt_tokens": 3400,
        "completion_tokens": 1180,
        "total_tokens": 4580,
    }
    assert usage_from_output("no tokens here") == {}


def test_run_writes_the_message_file_and_cleans_the_cache(tmp_path: Path) -> None:
    sandbox = FakeSandbox(
        ExecResult(0, OK_OUTPUT, "", 3.0), produced={"/tmp/harness-agent/chat.md": "# chat"}
    )
    ctx = make_ctx(tmp_path, sandbox)
    result = AiderAgent().run(ctx)
    assert result.exit == "completed"
    assert "calc.clamp" in sandbox.staged[TASK]
    assert (ctx.out_dir / "chat.md").read_text() == "# chat"
    cmds = [c[1]["cmd"] for c in sandbox.calls if c[0] == "exec"]
    assert cmds[-1] == ["rm", "-rf", "--", *CACHE_DIRS]
