"""qwen-code (npm ``@qwen-code/qwen-code``): ``qwen <task> --output-format stream-json``.

An OpenAI-compatible client: ``OPENAI_BASE_URL`` is the gateway, ``OPENAI_API_KEY`` the
trial's key, ``OPENAI_MODEL`` the entrant's model, and the settings file (in ``QWEN_HOME``,
outside the workspace) selects the ``openai`` auth type so that no login is asked for.
Tools run without asking (``--yolo``; the container is the sandbox). Background model
calls that are not the task (memory extraction and consolidation, skill review, follow-up
suggestions) are off, as are update checks, usage statistics, telemetry and co-author
trailers. The JSON events on stdout end with a ``result`` event carrying its token counts.
"""

from __future__ import annotations

import json
from typing import Any

from harness.agents.base import AgentResult
from harness.agents.claude import failure, result_event
from harness.agents.common import (
    AGENT_DIR,
    CliAgent,
    Invocation,
    base_env,
    json_events,
    verdict,
)
from harness.sandbox.base import ExecResult

NAME = "qwen-code"
QWEN_HOME = f"{AGENT_DIR}/qwen"
MAX_OUTPUT_TOKENS = 16384  # its default (the model's declared limit) is beyond most hosts


def settings(model_id: str) -> dict[str, Any]:
    """``$QWEN_HOME/settings.json``: the gateway as an OpenAI provider, no side traffic."""
    return {
        "security": {"auth": {"selectedType": "openai"}},
        "model": {"name": model_id, "skipNextSpeakerCheck": True},
        "general": {
            "enableAutoUpdate": False,
            "gitCoAuthor": {"commit": False, "pr": False},
            "terminalBell": False,
            "preventSystemSleep": False,
        },
        "memory": {
            "enableManagedAutoMemory": False,
            "enableManagedAutoDream": False,
            "enableAutoSkill": False,
        },
        "ui": {"enableFollowupSuggestions": False, "enableSpeculation": False},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
    }


def invocation(gateway_url: str, api_key: str, model_id: str, task: str) -> Invocation:
    """The ``qwen`` command line, environment and settings for one run."""
    argv = [
        "qwen",
        "--output-format", "stream-json",
        "--yolo",
        "--auth-type", "openai",
        "--model", model_id,
        "--prompt", task,
    ]  # fmt: skip
    env = {
        **base_env(api_key),
        "OPENAI_BASE_URL": gateway_url,
        "OPENAI_API_KEY": api_key,
        "OPENAI_MODEL": model_id,
        "QWEN_HOME": QWEN_HOME,
        "QWEN_CODE_MAX_OUTPUT_TOKENS": str(MAX_OUTPUT_TOKENS),
        "QWEN_USAGE_STATISTICS_ENABLED": "false",
        "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1",
    }
    return Invocation(
        argv=argv,
        env=env,
        files={f"{QWEN_HOME}/settings.json": json.dumps(settings(model_id), indent=2) + "\n"},
        transcripts={f"{QWEN_HOME}/projects": "qwen-projects"},
    )


def usage_from_result(result: dict[str, Any]) -> dict[str, Any]:
    """Its own token account from the ``result`` event (OpenAI- or Anthropic-shaped)."""
    usage = result.get("usage")
    if not isinstance(usage, dict):
        return {}
    prompt = int(usage.get("input_tokens") or usage.get("prompt_tokens") or 0)
    completion = int(usage.get("output_tokens") or usage.get("completion_tokens") or 0)
    cached = int(usage.get("cache_read_input_tokens") or 0)
    out: dict[str, Any] = {
        "prompt_tokens": prompt,
        "cached_prompt_tokens": cached,
        "completion_tokens": completion,
        "total_tokens": int(usage.get("total_tokens") or prompt + completion),
    }
    if result.get("num_turns") is not None:
        out["turns"] = int(result["num_turns"])
    return out


def classify(res: ExecResult) -> AgentResult:
    result = result_event(json_events(res.stdout))
    status = failure(result)
    return verdict(res, usage=usage_from_result(result), status=status, failed=bool(status))


class QwenCodeAgent(CliAgent):
    """Adapter for qwen-code; image ``agent-qwen`` (or ``agent-qwen-go``)."""

    name = NAME
    image_name = "agent-qwen"
    version_argv = ["qwen", "--version"]
    version_pattern = r"(\d+\.\d+\.\d+)"
    invocation = staticmethod(invocation)
    classify_output = staticmethod(classify)
