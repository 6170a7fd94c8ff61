"""opencode (npm ``opencode-ai``): ``opencode run --format json``, one message.

Its model comes from an openai-compatible provider, declared in a config file outside the
workspace (``OPENCODE_CONFIG``), whose base URL is the gateway and whose key is read from
``HARNESS_API_KEY``. Every other provider is disabled, external plugins are not loaded
(``--pure``), permissions are granted up front (no questions), autoupdate, sharing and
model-list fetches are off. Its session database (under ``XDG_DATA_HOME``) and logs are
copied out as the transcript; the JSON events on stdout carry its token counts.
"""

from __future__ import annotations

import json
from typing import Any

from harness.agents.base import AgentResult
from harness.agents.common import (
    AGENT_DIR,
    AGENT_HOME,
    CliAgent,
    Invocation,
    base_env,
    events_verdict,
    last_event,
)
from harness.sandbox.base import ExecResult

NAME = "opencode"
CONFIG = f"{AGENT_DIR}/opencode.json"
PROVIDER = "harness"
DATA = f"{AGENT_HOME}/.local/share/opencode"


def config(gateway_url: str, model_id: str) -> dict[str, Any]:
    """The opencode config: the gateway as the only provider, everything allowed."""
    return {
        "model": f"{PROVIDER}/{model_id}",
        "enabled_providers": [PROVIDER],
        "provider": {
            PROVIDER: {
                "npm": "@ai-sdk/openai-compatible",
                "name": "harness gateway",
                "options": {"baseURL": gateway_url, "apiKey": "{env:HARNESS_API_KEY}"},
                "models": {model_id: {"name": model_id}},
            }
        },
        "autoupdate": False,
        "share": "disabled",
        "permission": {"edit": "allow", "bash": "allow", "webfetch": "deny"},
    }


def invocation(gateway_url: str, api_key: str, model_id: str, task: str) -> Invocation:
    """The ``opencode run`` command line, environment and config for one run."""
    argv = [
        "opencode", "run",
        "--format", "json",
        "--pure",
        "--auto",
        "--title", "harness trial",  # no extra model call to invent a session title
        "--model", f"{PROVIDER}/{model_id}",
        task,
    ]  # fmt: skip
    env = {
        **base_env(api_key),
        "OPENCODE_CONFIG": CONFIG,
        "OPENCODE_DISABLE_AUTOUPDATE": "true",
        "OPENCODE_DISABLE_MODELS_FETCH": "true",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "true",
        "OPENCODE_DISABLE_DEFAULT_PLUGINS": "true",
        "OPENCODE_DISABLE_SHARE": "true",
    }
    return Invocation(
        argv=argv,
        env=env,
        files={CONFIG: json.dumps(config(gateway_url, model_id), indent=2) + "\n"},
        transcripts={  # its session store; not its snapshot/ (a git copy of the workspace)
            f"{DATA}/{name}": f"opencode/{name}"
            for name in ("opencode.db", "opencode.db-wal", "opencode.db-shm", "log")
        },
    )


def usage_from_events(evts: list[dict[str, Any]]) -> dict[str, Any]:
    """Tokens and cost from each ``step_finish`` event's part, summed."""
    prompt = completion = cached = steps = 0
    cost = 0.0
    for ev in evts:
        part = ev.get("part") if ev.get("type") == "step_finish" else None
        tokens = part.get("tokens") if isinstance(part, dict) else None
        if not isinstance(tokens, dict):
            continue
        steps += 1
        prompt += int(tokens.get("input") or 0)
        completion += int(tokens.get("output") or 0) + int(tokens.get("reasoning") or 0)
        cache = tokens.get("cache") or {}
        cached += int(cache.get("read") or 0) if isinstance(cache, dict) else 0
        cost += float(part.get("cost") or 0) if isinstance(part, dict) else 0.0
    if not steps:
        return {}
    return {
        "api_calls": steps,
        "prompt_tokens": prompt,
        "cached_prompt_tokens": cached,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "cost": cost,
    }


def error_message(evts: list[dict[str, Any]]) -> str:
    """The last ``error`` event's text (opencode may still exit 0 after one)."""
    ev = last_event(evts, "error")
    return "" if ev is None else json.dumps(ev.get("error", ev))[:500]


def classify(res: ExecResult) -> AgentResult:
    return events_verdict(res, usage_from_events, error_message)


class OpencodeAgent(CliAgent):
    """Adapter for opencode; image ``agent-opencode`` (or ``agent-opencode-go``)."""

    name = NAME
    image_name = "agent-opencode"
    version_argv = ["opencode", "--version"]
    version_pattern = r"(\d+\.\d+\.\d+)"
    invocation = staticmethod(invocation)
    classify_output = staticmethod(classify)
