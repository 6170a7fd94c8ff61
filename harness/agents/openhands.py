"""OpenHands (its V1 CLI, PyPI ``openhands``, on the SDK from ``openhands-ai``'s project):
``openhands --headless --json -t <task>``, one task, always-approve, no UI.

The agent runs in the CLI's own process, so the sandbox is our container (no Docker in
Docker). Its LLM (litellm underneath) is the gateway as an OpenAI-compatible provider:
``LLM_MODEL=openai/<id>``, ``LLM_BASE_URL`` and ``LLM_API_KEY``, applied with
``--override-with-envs`` (the CLI ignores these variables otherwise). Its settings and
conversations live under ``$HOME/.openhands`` (outside the workspace). It needs Python >=
3.12 (a Debian trixie image); there is no ``images/agent-openhands`` yet, so ``version()``
says so and the agents.yml entry is commented out (see there for why).
"""

from __future__ import annotations

from typing import Any

from harness.agents.base import AgentContext, AgentResult
from harness.agents.common import (
    AGENT_HOME,
    Invocation,
    base_env,
    image_version,
    json_events,
    require_gateway,
    run_invocation,
    task_text,
    verdict,
)
from harness.errors import UserError
from harness.images import images_dir
from harness.sandbox.base import ExecResult

NAME = "openhands"
IMAGE = "agent-openhands"
STATE = f"{AGENT_HOME}/.openhands"


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
    }
    return Invocation(argv=argv, env=env, transcripts={STATE: "openhands"})


def error_message(evts: list[dict[str, Any]]) -> str:
    """The last error event's text, if the run ended in one."""
    for ev in reversed(evts):
        kind = str(ev.get("type") or ev.get("kind") or "")
        if "error" in kind.lower():
            return str(ev.get("message") or ev.get("error") or ev)[:500]
    return ""


def classify(res: ExecResult) -> AgentResult:
    status = error_message(json_events(res.stdout))
    return verdict(res, status=status, failed=bool(status))


class OpenHandsAgent:
    """Adapter for OpenHands; needs an ``images/agent-openhands`` (Python >= 3.12)."""

    name = NAME

    def version(self) -> str:
        if not (images_dir() / IMAGE / "Dockerfile").is_file():
            raise UserError(
                "openhands has no image here: it needs Python >= 3.12 (a Debian trixie "
                "image), which the image graph does not have yet",
                file=images_dir() / IMAGE,
                field="agents.openhands",
                fix="add images/agent-openhands/Dockerfile on a Python >= 3.12 base, "
                "or remove openhands from agents.yml",
            )
        return image_version(IMAGE, ["openhands", "--version"], r"(\d+\.\d+\.\d+)")

    def image(self, toolchain: str) -> str | None:
        return f"{IMAGE}-go" if toolchain == "go" else IMAGE

    def run(self, ctx: AgentContext) -> AgentResult:
        url, key = require_gateway(ctx, NAME)
        inv = invocation(url, key, ctx.model.id_for(NAME), task_text(ctx))
        return run_invocation(ctx, inv, lambda res, _ctx: classify(res))
