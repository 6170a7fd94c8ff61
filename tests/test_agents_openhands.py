"""OpenHands adapter, at the config level: it has no image here (see agents.yml)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.agents.openhands import STATE, OpenHandsAgent, classify, invocation
from harness.errors import UserError
from harness.sandbox.base import ExecResult
from tests.test_agents_common import GATEWAY, KEY, FakeSandbox, assert_only_gateway, make_ctx

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


def test_version_says_there_is_no_image() -> None:
    with pytest.raises(UserError, match=r"Python >= 3\.12"):
        OpenHandsAgent().version()


def test_run_with_a_fake_sandbox(tmp_path: Path) -> None:
    sandbox = FakeSandbox(ExecResult(0, '{"type": "finish"}\n', "", 1.0))
    result = OpenHandsAgent().run(make_ctx(tmp_path, sandbox))
    assert result.exit == "completed"
    execs = [c[1] for c in sandbox.calls if c[0] == "exec"]
    assert "calc.clamp" in execs[0]["cmd"][-1]
