"""OpenHands (its V1 CLI, PyPI ``openhands``, on the SDK from ``openhands-ai``'s project):
``openhands --headless --json -t <task>``, one task, always-approve, no UI.

The agent runs in the CLI's own process, so the sandbox is our container (no Docker in
Docker). Its LLM (litellm underneath) is the gateway as an OpenAI-compatible provider:
``LLM_MODEL=openai/<id>``, ``LLM_BASE_URL`` and ``LLM_API_KEY``, applied with
``--override-with-envs`` (the CLI ignores these variables otherwise). Its settings and
conversations live under ``$HOME/.openhands`` (outside the workspace). It declares Python
3.12 only; the image runs it on Debian trixie's 3.13 (see images/agent-openhands).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.agents.base import AgentContext, AgentResult
from harness.agents.common import (
    AGENT_HOME,
    CliAgent,
    Invocation,
    base_env,
    json_events,
    verdict,
)
from harness.sandbox.base import ExecResult

NAME = "openhands"
IMAGE = "agent-openhands"
STATE = f"{AGENT_HOME}/.openhands"
TRANSCRIPT = "openhands-conversations"
NO_REMOTE = "/nonexistent/"


def invocation(gateway_url: str, api_key: str, model_id: str, task: str) -> Invocation:
    """The headless ``openhands`` command line and environment for one run."""
    argv = ["openhands", "--headless", "--json", "--override-with-envs", "-t", task]
    env = {
        **base_env(api_key),
        "LLM_MODEL": f"openai/{model_id}",
        "LLM_BASE_URL": gateway_url,
        "LLM_API_KEY": api_key,
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "OPENHANDS_SUPPRESS_BANNER": "1",
        # it always git-clones its public skills from GitHub; with no route out that waits
        # for a network timeout, so every https remote is pointed at a missing local path
        "GIT_CONFIG_COUNT": "2",
        "GIT_CONFIG_KEY_1": f"url.{NO_REMOTE}.insteadOf",
        "GIT_CONFIG_VALUE_1": "https://",
    }
    return Invocation(argv=argv, env=env, transcripts={f"{STATE}/conversations": TRANSCRIPT})


def error_message(evts: list[dict[str, Any]]) -> str:
    """The last error event's text, if the run ended in one."""
    for ev in reversed(evts):
        kind = str(ev.get("type") or ev.get("kind") or "")
        if "error" in kind.lower():
            return str(ev.get("message") or ev.get("error") or ev)[:500]
    return ""


def usage_from_state(out_dir: Path) -> dict[str, Any]:
    """Its own token account: each conversation's ``stats`` in ``base_state.json``."""
    prompt = completion = cached = calls = 0
    for state in sorted((out_dir / TRANSCRIPT).glob("*/base_state.json")):
        try:
            stats = json.loads(state.read_text()).get("stats") or {}
        except (OSError, ValueError, RecursionError, AttributeError):
            continue
        for metrics in (stats.get("usage_to_metrics") or {}).values():
            acc = (metrics or {}).get("accumulated_token_usage") or {}
            prompt += int(acc.get("prompt_tokens") or 0)
            completion += int(acc.get("completion_tokens") or 0)
            cached += int(acc.get("cache_read_tokens") or 0)
            calls += len((metrics or {}).get("token_usages") or [])
    if not calls:
        return {}
    return {
        "api_calls": calls,
        "prompt_tokens": prompt,
        "cached_prompt_tokens": cached,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def classify(res: ExecResult, out_dir: Path | None = None) -> AgentResult:
    status = error_message(json_events(res.stdout))
    usage = usage_from_state(out_dir) if out_dir else {}
    return verdict(res, usage=usage, status=status, failed=bool(status))


class OpenHandsAgent(CliAgent):
    """Adapter for OpenHands; image ``agent-openhands`` (or ``agent-openhands-go``)."""

    name = NAME
    image_name = IMAGE
    version_argv = ["openhands", "--version"]
    version_pattern = r"OpenHands CLI (\d+\.\d+\.\d+)"
    invocation = staticmethod(invocation)

    def classify(self, res: ExecResult, ctx: AgentContext) -> AgentResult:
        return classify(res, ctx.out_dir)
