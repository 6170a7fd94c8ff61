"""Agent images build here, and each installed CLI reports exactly its agents.yml pin.

``version()`` runs the CLI's own version command in a throwaway container of the image
(no network) and caches the answer per image id. goose and crush are skipped: they are
published only as prebuilt release binaries, which nothing reachable here serves.
"""

from __future__ import annotations

import os

import pytest

from harness.agents.aider import AiderAgent
from harness.agents.claude import ClaudeCodeAgent
from harness.agents.codex import CodexAgent
from harness.agents.common import image_version
from harness.agents.mini import MiniAgent
from harness.agents.opencode import OpencodeAgent
from harness.agents.openhands import OpenHandsAgent
from harness.agents.qwen import QwenCodeAgent
from harness.config.settings import cache_dir
from harness.images import ensure_image
from tests._docker import client_or_skip
from tests.agents.test_common import pinned

pytestmark = [pytest.mark.docker, pytest.mark.integration]


@pytest.mark.parametrize(
    "agent_cls",
    [
        MiniAgent, AiderAgent, CodexAgent, OpencodeAgent, ClaudeCodeAgent, QwenCodeAgent,
        OpenHandsAgent,
    ],
)  # fmt: skip
def test_image_builds_and_reports_the_pin(agent_cls: type) -> None:
    client = client_or_skip()
    agent = agent_cls()
    ref = ensure_image(agent.image("python"), client=client)
    assert agent.version() == pinned(agent.name)
    cached = cache_dir() / "agent-versions" / f"{ref.id.replace(':', '-')}.txt"
    assert cached.read_text().strip() == pinned(agent.name)
    # this process's probes only: another worker may be probing the same image right now
    mine = ["harness.phase=agent-version", f"harness.pid={os.getpid()}"]
    leftovers = client.containers.list(all=True, filters={"label": mine})
    assert [c for c in leftovers if c.image.id == ref.id] == []


@pytest.mark.parametrize(
    ("image", "argv", "pattern", "agent"),
    [  # Go variants (aider's and opencode's follow mini's and codex's recipes; openhands-go
       # is left out: a ~5 min build whose Dockerfile equals agent-openhands')
        ("agent-mini-go", ["mini", "--help"], r"mini-swe-agent version (\d+(?:\.\d+)+)",
         "mini-swe-agent"),
        ("agent-codex-go", ["codex", "--version"], r"codex-cli (\d+(?:\.\d+)+)", "codex"),
        ("agent-claude-go", ["claude", "--version"], r"(\d+\.\d+\.\d+) \(Claude Code\)",
         "claude-code"),
        ("agent-qwen-go", ["qwen", "--version"], r"(\d+\.\d+\.\d+)", "qwen-code"),
    ],
)  # fmt: skip
def test_go_variant_reports_the_pin(image: str, argv: list[str], pattern: str, agent: str) -> None:
    client = client_or_skip()
    ref = ensure_image(image, client=client)
    assert image_version(image, argv, pattern) == pinned(agent)
    go = client.containers.run(ref.tag, ["go", "version"], remove=True, network_mode="none")
    assert b"go1." in go


def test_crush_is_not_installable_here() -> None:
    pytest.skip(
        "crush's npm package only launches a release binary that its install script downloads "
        "from a host not reachable here; its adapter is tested at the config level "
        "(test_crush.py)"
    )


def test_goose_is_not_installable_here() -> None:
    pytest.skip(
        "goose is published only as prebuilt release binaries, on no package registry "
        "reachable here; its adapter is tested at the config level (test_goose.py)"
    )
