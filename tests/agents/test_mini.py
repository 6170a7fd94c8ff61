"""mini-swe-agent adapter: command, environment, pin, exit classification, usage."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.agents.mini import (
    MiniAgent,
    classify,
    invocation,
    read_trajectory,
    usage_from_trajectory,
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


def traj(status: str, calls: int = 2) -> dict:
    usage = {"prompt_tokens": 1500, "completion_tokens": 20, "total_tokens": 1520}
    return {
        "info": {"exit_status": status, "model_stats": {"instance_cost": 0.0, "api_calls": calls}},
        "messages": [
            {"role": "system", "content": "s"},
            {"role": "assistant", "content": "a", "extra": {"response": {"usage": usage}}},
            {"role": "assistant", "content": "b", "extra": {"response": {"usage": usage}}},
        ],
    }


def test_invocation_points_only_at_the_gateway() -> None:
    inv = invocation(GATEWAY, KEY, MODEL, "fix it")
    assert_only_gateway(inv)
    argv = inv.argv
    assert argv[0] == "mini"
    assert argv[argv.index("-m") + 1] == f"openai/{MODEL}"
    assert argv[argv.index("-t") + 1] == "fix it"
    assert {"-y", "--exit-immediately"} <= set(argv)
    assert f"model.model_kwargs.api_base={GATEWAY}" in argv
    assert "mini.yaml" in argv and "model.cost_tracking=ignore_errors" in argv
    assert inv.env["OPENAI_API_KEY"] == KEY
    assert inv.env["MSWEA_CONFIGURED"] == "true"
    assert KEY not in " ".join(argv)
    assert all(not p.startswith("/workspace") for p in [*inv.files, *inv.transcripts])


def test_image_installs_the_pin() -> None:
    assert_image_pins("agent-mini", "mini-swe-agent", "mini-swe-agent")
    assert MiniAgent().image("python") == "agent-mini"
    assert MiniAgent().image("go") == "agent-mini-go"


@pytest.mark.parametrize(
    ("status", "code", "timed_out", "expected"),
    [
        ("Submitted", 0, False, "completed"),
        ("LimitsExceeded", 0, False, "completed"),
        ("ContextWindowExceededError", 0, False, "context_window_exceeded"),
        ("RateLimitError", 0, False, "rate_limited"),
        ("APIConnectionError", 0, False, "crashed"),
        ("", 1, False, "crashed"),
        ("", None, True, "timeout"),
    ],
)
def test_classify(status: str, code: int | None, timed_out: bool, expected: str) -> None:
    res = ExecResult(code, "step 1\nstep 2\n", "", 5.0, timed_out)
    result = classify(res, traj(status) if status else {})
    assert result.exit == expected
    if expected == "crashed":
        assert "step 2" in result.detail


def test_usage_from_trajectory() -> None:
    assert usage_from_trajectory(traj("Submitted", calls=2)) == {
        "api_calls": 2,
        "prompt_tokens": 3000,
        "completion_tokens": 40,
        "total_tokens": 3040,
    }
    assert usage_from_trajectory({}) == {}


def test_read_trajectory_tolerates_missing_and_broken(tmp_path: Path) -> None:
    assert read_trajectory(tmp_path / "none.json") == {}
    (tmp_path / "bad.json").write_text("{not json")
    assert read_trajectory(tmp_path / "bad.json") == {}


def test_run_reads_the_copied_trajectory(tmp_path: Path) -> None:
    sandbox = FakeSandbox(
        ExecResult(0, "done", "", 3.0),
        produced={"/tmp/harness-agent/traj.json": json.dumps(traj("Submitted"))},
    )
    ctx = make_ctx(tmp_path, sandbox)
    result = MiniAgent().run(ctx)
    assert result.exit == "completed"
    assert result.self_reported_usage["api_calls"] == 2
    run = next(c[1] for c in sandbox.calls if c[0] == "exec")
    assert run["timeout"] == ctx.timeout_s
    assert run["cmd"][run["cmd"].index("-m") + 1] == "openai/qwen/qwen3-coder-30b"
