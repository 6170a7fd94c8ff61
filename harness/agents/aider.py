"""aider (PyPI ``aider-chat``): one chat message, edits applied as SEARCH/REPLACE blocks.

It runs once on a message file (``--message-file``) and exits after the reply and its
edits. It reaches the gateway through litellm's OpenAI provider (``openai/<id>`` with
``--openai-api-base``), never commits, never touches ``.gitignore``, and keeps its chat
and LLM histories outside the workspace. Its repo-map cache, which it writes in the
workspace root, is removed after the run so it does not show in the diff.
"""

from __future__ import annotations

import re
from typing import Any

from harness.agents.base import AgentResult
from harness.agents.common import (
    AGENT_DIR,
    CliAgent,
    Invocation,
    base_env,
    verdict,
)
from harness.sandbox.base import ExecResult

NAME = "aider"
TASK = f"{AGENT_DIR}/task.md"
CHAT = f"{AGENT_DIR}/chat.md"
LLM_HISTORY = f"{AGENT_DIR}/llm-history.txt"
INPUT_HISTORY = f"{AGENT_DIR}/input.history"
EDIT_FORMAT = "diff"  # SEARCH/REPLACE blocks: what the cassettes and most models speak
CACHE_DIRS = [".aider.tags.cache.v3", ".aider.tags.cache.v4"]
TOKENS_RE = re.compile(
    r"Tokens: ([\d.]+)([kKmM]?) sent(?:, [\d.]+[kKmM]? cache \w+)*, ([\d.]+)([kKmM]?) received"
)
FATAL_RE = re.compile(r"litellm\.\w+Error|APIConnectionError|BadRequestError|AuthenticationError")


def invocation(gateway_url: str, api_key: str, model_id: str, task: str) -> Invocation:
    """The ``aider`` command line, environment and message file for one run."""
    argv = [
        "aider",
        "--model", f"openai/{model_id}",
        "--openai-api-base", gateway_url,
        "--edit-format", EDIT_FORMAT,
        "--message-file", TASK,
        "--yes-always",
        "--no-auto-commits",
        "--no-dirty-commits",
        "--no-gitignore",
        "--no-auto-lint",
        "--no-auto-test",
        "--no-check-update",
        "--no-show-release-notes",
        "--analytics-disable",
        "--no-show-model-warnings",
        "--no-detect-urls",
        "--no-suggest-shell-commands",
        "--no-fancy-input",
        "--no-pretty",
        "--no-stream",
        "--chat-history-file", CHAT,
        "--input-history-file", INPUT_HISTORY,
        "--llm-history-file", LLM_HISTORY,
    ]  # fmt: skip
    env = {
        **base_env(api_key),
        "OPENAI_API_KEY": api_key,
        "OPENAI_API_BASE": gateway_url,
        "AIDER_CHECK_UPDATE": "false",
        "AIDER_ANALYTICS": "false",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }
    return Invocation(
        argv=argv,
        env=env,
        files={TASK: task},
        transcripts={CHAT: "chat.md", LLM_HISTORY: "llm-history.txt"},
        cleanup=CACHE_DIRS,
    )


def _count(number: str, suffix: str) -> int:
    scale = {"": 1, "k": 1_000, "m": 1_000_000}[suffix.lower()]
    return round(float(number) * scale)


def usage_from_output(output: str) -> dict[str, Any]:
    """Tokens from aider's ``Tokens: N sent, M received.`` lines, summed (rounded by it)."""
    sent = received = calls = 0
    for m in TOKENS_RE.finditer(output):
        sent += _count(m.group(1), m.group(2))
        received += _count(m.group(3), m.group(4))
        calls += 1
    if not calls:
        return {}
    return {
        "api_calls": calls,
        "prompt_tokens": sent,
        "completion_tokens": received,
        "total_tokens": sent + received,
    }


def classify(res: ExecResult) -> AgentResult:
    """aider exits 0 even when the model call failed; a litellm error makes it a failure."""
    output = f"{res.stdout}\n{res.stderr}"
    fatal = bool(FATAL_RE.search(output[-6000:]))
    return verdict(res, usage=usage_from_output(output), failed=fatal)


class AiderAgent(CliAgent):
    """Adapter for aider; image ``agent-aider`` (or ``agent-aider-go``)."""

    name = NAME
    image_name = "agent-aider"
    version_argv = ["aider", "--version"]
    version_pattern = r"aider (\d+(?:\.\d+)+)"
    invocation = staticmethod(invocation)
    classify_output = staticmethod(classify)
