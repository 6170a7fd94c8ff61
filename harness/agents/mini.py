"""mini-swe-agent (its ``mini`` CLI): a bash-only agent that speaks in tool calls.

Version 2 asks the model for a ``bash`` tool call per step and stops when a command
prints ``COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT``. It talks to the gateway through
litellm (``openai/<id>`` with ``api_base``) and writes ``traj.json``, whose
``info.exit_status`` and per-message ``usage`` this adapter reads back.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.agents.base import AgentContext, AgentResult
from harness.agents.common import (
    AGENT_DIR,
    CliAgent,
    Invocation,
    base_env,
    verdict,
)
from harness.sandbox.base import ExecResult

NAME = "mini-swe-agent"
TRAJECTORY = f"{AGENT_DIR}/traj.json"
COMMAND_TIMEOUT_S = 180  # one bash command; the trial's timeout bounds the whole run
FINISHED = {"Submitted", "LimitsExceeded", "TimeExceeded"}  # the agent stopped by itself


def invocation(gateway_url: str, api_key: str, model_id: str, task: str) -> Invocation:
    """The ``mini`` command line and environment for one non-interactive run."""
    argv = [
        "mini",
        "-m", f"openai/{model_id}",
        "-t", task,
        "-y",
        "--exit-immediately",
        "-l", "0",
        "-o", TRAJECTORY,
        "-c", "mini.yaml",
        "-c", f"model.model_kwargs.api_base={gateway_url}",
        "-c", "model.cost_tracking=ignore_errors",
        "-c", f"environment.timeout={COMMAND_TIMEOUT_S}",
    ]  # fmt: skip
    env = {
        **base_env(api_key),
        "OPENAI_API_KEY": api_key,
        "OPENAI_API_BASE": gateway_url,
        "MSWEA_CONFIGURED": "true",
        "MSWEA_COST_TRACKING": "ignore_errors",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }
    return Invocation(argv=argv, env=env, transcripts={TRAJECTORY: "traj.json"})


def read_trajectory(path: Path) -> dict[str, Any]:
    """``traj.json`` as a dict, or empty when the run wrote none (or a broken one)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def usage_from_trajectory(traj: dict[str, Any]) -> dict[str, Any]:
    """Calls and tokens as mini recorded them (each response's ``usage``, summed)."""
    info = traj.get("info") or {}
    stats = info.get("model_stats") or {}
    totals = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
    seen = False
    for msg in traj.get("messages") or []:
        usage = (((msg or {}).get("extra") or {}).get("response") or {}).get("usage")
        if isinstance(usage, dict):
            seen = True
            for key in totals:
                totals[key] += int(usage.get(key) or 0)
    out: dict[str, Any] = {}
    if "api_calls" in stats:
        out["api_calls"] = stats["api_calls"]
    if seen:
        out.update(totals)
    return out


def classify(res: ExecResult, traj: dict[str, Any]) -> AgentResult:
    """Exit category from mini's own ``exit_status`` first, then its exit code and output."""
    status = str((traj.get("info") or {}).get("exit_status") or "")
    # mini records an exception as its exit status and still exits 0
    failed = bool(status) and status not in FINISHED
    return verdict(res, usage=usage_from_trajectory(traj), status=status, failed=failed)


class MiniAgent(CliAgent):
    """Adapter for mini; image ``agent-mini`` (or ``agent-mini-go``)."""

    name = NAME
    image_name = "agent-mini"
    version_argv = ["mini", "--help"]
    version_pattern = r"mini-swe-agent version (\d+(?:\.\d+)+)"
    invocation = staticmethod(invocation)

    def classify(self, res: ExecResult, ctx: AgentContext) -> AgentResult:
        return classify(res, read_trajectory(ctx.out_dir / "traj.json"))
