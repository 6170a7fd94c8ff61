"""codex (npm ``@openai/codex``): ``codex exec --json``, one non-interactive turn.

codex speaks the Responses API only; its model provider here is a custom one whose base
URL is the gateway (which passes ``/v1/responses`` through) and whose key comes from
``HARNESS_API_KEY``. ``CODEX_HOME`` is a folder outside the workspace holding the config
and the session rollouts. Approvals are off and codex's own sandbox is bypassed: the
container is the sandbox. Update checks, analytics and feedback are off.
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
    events_verdict,
    last_event,
)
from harness.sandbox.base import ExecResult

NAME = "codex"
CODEX_HOME = f"{AGENT_DIR}/codex"
LAST_MESSAGE = f"{AGENT_DIR}/last-message.txt"
PROVIDER = "harness"
RETRIES = 2  # the gateway already retries on other hosts; codex need not wait long


def _toml(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string


def config_toml(gateway_url: str, model_id: str) -> str:
    """``$CODEX_HOME/config.toml``: the gateway as the only model provider."""
    return "\n".join(
        [
            f"model = {_toml(model_id)}",
            f"model_provider = {_toml(PROVIDER)}",
            'approval_policy = "never"',
            'sandbox_mode = "danger-full-access"',
            "check_for_update_on_startup = false",
            'web_search = "disabled"',
            "",
            f"[model_providers.{PROVIDER}]",
            'name = "harness gateway"',
            f"base_url = {_toml(gateway_url)}",
            'env_key = "HARNESS_API_KEY"',
            'wire_api = "responses"',
            f"request_max_retries = {RETRIES}",
            f"stream_max_retries = {RETRIES}",
            "",
            "[analytics]",
            "enabled = false",
            "",
            "[feedback]",
            "enabled = false",
            "",
            "[history]",
            'persistence = "none"',
            "",
        ]
    )


def invocation(gateway_url: str, api_key: str, model_id: str, task: str) -> Invocation:
    """The ``codex exec`` command line, environment and config for one run."""
    argv = [
        "codex", "exec",
        "--json",
        "--strict-config",
        "--skip-git-repo-check",
        "--dangerously-bypass-approvals-and-sandbox",
        "--color", "never",
        "--model", model_id,
        "--output-last-message", LAST_MESSAGE,
        task,
    ]  # fmt: skip
    env = {**base_env(api_key), "CODEX_HOME": CODEX_HOME}
    return Invocation(
        argv=argv,
        env=env,
        files={f"{CODEX_HOME}/config.toml": config_toml(gateway_url, model_id)},
        transcripts={f"{CODEX_HOME}/sessions": "codex-sessions", LAST_MESSAGE: "last-message.txt"},
    )


def usage_from_events(evts: list[dict[str, Any]]) -> dict[str, Any]:
    """Tokens from each ``turn.completed`` event, summed."""
    prompt = cached = completion = turns = 0
    for ev in evts:
        usage = ev.get("usage") if ev.get("type") == "turn.completed" else None
        if isinstance(usage, dict):
            turns += 1
            prompt += int(usage.get("input_tokens") or 0)
            cached += int(usage.get("cached_input_tokens") or 0)
            completion += int(usage.get("output_tokens") or 0)
    if not turns:
        return {}
    return {
        "prompt_tokens": prompt,
        "cached_prompt_tokens": cached,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def failure(evts: list[dict[str, Any]]) -> str:
    """The message of a ``turn.failed`` event (codex's own account of a failed turn)."""
    ev = last_event(evts, "turn.failed")
    if ev is None:
        return ""
    err = ev.get("error") or {}
    return str(err.get("message") if isinstance(err, dict) else err)


def classify(res: ExecResult) -> AgentResult:
    return events_verdict(res, usage_from_events, failure)


class CodexAgent(CliAgent):
    """Adapter for codex; image ``agent-codex`` (or ``agent-codex-go``)."""

    name = NAME
    image_name = "agent-codex"
    version_argv = ["codex", "--version"]
    version_pattern = r"codex-cli (\d+(?:\.\d+)+)"
    invocation = staticmethod(invocation)
    classify_output = staticmethod(classify)
