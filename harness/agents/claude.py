"""Claude Code (npm ``@anthropic-ai/claude-code``): ``claude -p``, headless, one task.

Claude Code speaks Anthropic Messages only; ``ANTHROPIC_BASE_URL`` is the gateway (whose
``/v1/messages`` front translates to the fleet's chat completions) and
``ANTHROPIC_API_KEY`` the trial's key (sent as ``x-api-key``). Every model it names (main,
the "small/fast" one, subagents) is the entrant's model; names it hard-codes anyway map
through the fleet's ``agent_aliases`` or the key's pinned model. Its state and settings
live in ``CLAUDE_CONFIG_DIR`` outside the workspace. Permissions are skipped (the
container is the sandbox; ``IS_SANDBOX=1`` lets it run as root); autoupdate, telemetry,
error reports and other non-essential traffic are off. ``--output-format stream-json``
prints one JSON event a line; the last, ``result``, carries its own account of the run.
"""

from __future__ import annotations

import json
from typing import Any

from harness.agents.base import AgentResult
from harness.agents.common import (
    AGENT_DIR,
    CliAgent,
    Invocation,
    base_env,
    json_events,
    last_event,
    verdict,
)
from harness.sandbox.base import ExecResult

NAME = "claude-code"
CONFIG_DIR = f"{AGENT_DIR}/claude"
MAX_OUTPUT_TOKENS = 16384  # its default asks local servers for 32000, more than most allow


def settings() -> dict[str, Any]:
    """``$CLAUDE_CONFIG_DIR/settings.json``: no updates, no telemetry, everything allowed."""
    return {
        "autoUpdates": False,
        "includeCoAuthoredBy": False,
        "cleanupPeriodDays": 1,
        "permissions": {"defaultMode": "bypassPermissions", "deny": ["WebFetch", "WebSearch"]},
    }


def gateway_root(gateway_url: str) -> str:
    """Claude Code appends ``/v1/messages`` itself."""
    url = gateway_url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


def invocation(gateway_url: str, api_key: str, model_id: str, task: str) -> Invocation:
    """The ``claude -p`` command line, environment and settings for one run."""
    argv = [
        "claude", "-p",
        "--output-format", "stream-json",
        "--verbose",  # stream-json needs it
        "--dangerously-skip-permissions",
        "--model", model_id,
        "--settings", f"{CONFIG_DIR}/settings.json",
        "--",
        task,
    ]  # fmt: skip
    env = {
        **base_env(api_key),
        "ANTHROPIC_BASE_URL": gateway_root(gateway_url),
        "ANTHROPIC_API_KEY": api_key,
        "ANTHROPIC_MODEL": model_id,
        "ANTHROPIC_SMALL_FAST_MODEL": model_id,
        "ANTHROPIC_DEFAULT_HAIKU_MODEL": model_id,
        "ANTHROPIC_DEFAULT_SONNET_MODEL": model_id,
        "ANTHROPIC_DEFAULT_OPUS_MODEL": model_id,
        "CLAUDE_CODE_SUBAGENT_MODEL": model_id,
        "CLAUDE_CONFIG_DIR": CONFIG_DIR,
        "CLAUDE_CODE_MAX_OUTPUT_TOKENS": str(MAX_OUTPUT_TOKENS),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_NON_ESSENTIAL_MODEL_CALLS": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_BUG_COMMAND": "1",
        "IS_SANDBOX": "1",
    }
    return Invocation(
        argv=argv,
        env=env,
        files={f"{CONFIG_DIR}/settings.json": json.dumps(settings(), indent=2) + "\n"},
        transcripts={f"{CONFIG_DIR}/projects": "claude-projects"},
    )


def result_event(evts: list[dict[str, Any]]) -> dict[str, Any]:
    """The final ``result`` event (empty when the run died before it)."""
    return last_event(evts, "result") or {}


def usage_from_result(result: dict[str, Any]) -> dict[str, Any]:
    """Its own token and cost account (Anthropic usage: input excludes cache reads)."""
    usage = result.get("usage")
    if not isinstance(usage, dict):
        return {}
    cached = int(usage.get("cache_read_input_tokens") or 0)
    prompt = (
        int(usage.get("input_tokens") or 0)
        + cached
        + int(usage.get("cache_creation_input_tokens") or 0)
    )
    completion = int(usage.get("output_tokens") or 0)
    out: dict[str, Any] = {
        "prompt_tokens": prompt,
        "cached_prompt_tokens": cached,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if result.get("num_turns") is not None:
        out["turns"] = int(result["num_turns"])
    return out


def failure(result: dict[str, Any]) -> str:
    """Its own account of a failed run ("" when it says it succeeded)."""
    if not result:
        return ""
    if result.get("is_error") or result.get("subtype") not in (None, "success"):
        detail = result.get("api_error") or result.get("subtype") or "error"
        return f"{detail}: {str(result.get('result') or '')[:400]}"
    return ""


def classify(res: ExecResult) -> AgentResult:
    result = result_event(json_events(res.stdout))
    status = failure(result)
    return verdict(res, usage=usage_from_result(result), status=status, failed=bool(status))


class ClaudeCodeAgent(CliAgent):
    """Adapter for Claude Code; image ``agent-claude`` (or ``agent-claude-go``)."""

    name = NAME
    image_name = "agent-claude"
    version_argv = ["claude", "--version"]
    version_pattern = r"(\d+\.\d+\.\d+) \(Claude Code\)"
    invocation = staticmethod(invocation)
    classify_output = staticmethod(classify)
