"""Real agent CLIs, end to end, on replayed model traffic (no model host anywhere).

Two layers:

- ``test_adapter_on_replay``: the adapter runs its real CLI in its real image, in a Docker
  sandbox on the host's network namespace, against a gateway served by this test on
  127.0.0.1 from a hand-made cassette (tests/cassettes/). The workspace is the scenario's,
  set up by harness; the hidden tests then decide whether the edit was right.
- ``test_harness_exec_replay``: the same through ``harness exec --replay`` (the trial's own
  gateway container). Skipped, with the reason, while the CLI has no ``--replay`` option.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.agents.aider import AiderAgent
from harness.agents.base import AgentContext
from harness.agents.claude import ClaudeCodeAgent
from harness.agents.codex import CodexAgent
from harness.agents.mini import MiniAgent
from harness.agents.opencode import OpencodeAgent
from harness.agents.openhands import OpenHandsAgent
from harness.agents.qwen import QwenCodeAgent
from harness.config.entrants import LLMEntry
from harness.config.settings import Settings
from harness.gateway import GatewayServer
from harness.sandbox.base import SandboxSpec
from harness.scenario.load import load_scenario
from harness.trial.workspace import setup
from tests._docker import client_or_skip, leftovers, new_trial
from tests.conftest import REPO_ROOT

pytestmark = [pytest.mark.docker, pytest.mark.integration]

CASSETTES = REPO_ROOT / "tests" / "cassettes"
SCENARIOS = REPO_ROOT / "scenarios"
REPLAY = LLMEntry(name="replay", model="replay", local=True)
CASES = [  # agent, cassette, scenario, hidden tests pass?, transcript kept in the run folder
    (MiniAgent, "mini-py-fast-solve.jsonl", "smoke/py-fast", True, "traj.json"),
    (MiniAgent, "mini-py-fast-wrong.jsonl", "smoke/py-fast", False, "traj.json"),
    (AiderAgent, "aider-py-fast-solve.jsonl", "smoke/py-fast", True, "chat.md"),
    (AiderAgent, "aider-py-fast-wrong.jsonl", "smoke/py-fast", False, "chat.md"),
    (CodexAgent, "codex-py-fast-noop.jsonl", "smoke/py-fast", False, "codex-sessions"),
    (OpencodeAgent, "opencode-py-fast-noop.jsonl", "smoke/py-fast", False, "opencode"),
    (ClaudeCodeAgent, "claude-py-fast-solve.jsonl", "smoke/py-fast", True, "claude-projects"),
    (ClaudeCodeAgent, "claude-py-fast-wrong.jsonl", "smoke/py-fast", False, "claude-projects"),
    (QwenCodeAgent, "qwen-py-fast-solve.jsonl", "smoke/py-fast", True, "qwen-projects"),
    (QwenCodeAgent, "qwen-py-fast-wrong.jsonl", "smoke/py-fast", False, "qwen-projects"),
    (
        OpenHandsAgent,
        "openhands-py-fast-solve.jsonl",
        "smoke/py-fast",
        True,
        "openhands-conversations",
    ),
    (
        OpenHandsAgent,
        "openhands-py-fast-wrong.jsonl",
        "smoke/py-fast",
        False,
        "openhands-conversations",
    ),
]


NOOP_TRANSCRIPTS = {"codex-sessions", "opencode"}  # those cassettes change nothing


def git_status(ws: Path) -> set[str]:
    """Paths the agent changed or added in the workspace (harness's own state excluded)."""
    res = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=ws,
        capture_output=True,
        text=True,
        check=True,
    )
    return {line[3:] for line in res.stdout.splitlines() if line.strip()}


def _hidden_tests_pass(scenario: str, workspace: Path, scratch: Path) -> bool:
    """Run the scenario's hidden tests on a copy of the workspace (never in the agent's)."""
    copy = scratch / "verify"
    shutil.copytree(workspace, copy, ignore=shutil.ignore_patterns(".git"))
    hidden = SCENARIOS / scenario / "hidden"
    for item in hidden.iterdir():
        shutil.copytree(item, copy / item.name)
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            *sorted(p.name for p in hidden.iterdir()),
        ],
        cwd=copy,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return res.returncode == 0


@pytest.mark.parametrize(("agent_cls", "cassette", "scenario", "solves", "transcript"), CASES)
def test_adapter_on_replay(
    agent_cls: Any, cassette: str, scenario: str, solves: bool, transcript: str, tmp_path: Path
) -> None:
    from harness.images import ensure_image
    from harness.sandbox.docker import DockerSandbox

    client = client_or_skip()
    agent = agent_cls()
    loaded = load_scenario(scenario, SCENARIOS)
    settings = Settings(
        workspace=tmp_path / "ws",
        results=tmp_path / "results",
        scenario_root=SCENARIOS,
        repo_cache=None,
        skip_remote=True,
        project_root=tmp_path,
    )
    ws = setup(loaded, settings)
    image = ensure_image(agent.image(loaded.scenario.toolchain()))
    trial = new_trial()
    out = tmp_path / "agent"
    out.mkdir()
    spec = SandboxSpec(
        phase="agent",
        image=image.tag,
        workspace=ws,
        network="host",  # reaches the test's gateway on 127.0.0.1, as the only server there
        labels={"harness.trial": trial},
    )
    with GatewayServer(replay=CASSETTES / cassette) as gw:
        key = gw.issue_key(trial, agent.name, REPLAY.name)
        sandbox = DockerSandbox(spec, client=client)
        try:
            sandbox.start()
            result = agent.run(
                AgentContext(
                    scenario=loaded,
                    workspace=ws,
                    sandbox=sandbox,
                    model=REPLAY,
                    seed=loaded.seed,
                    out_dir=out,
                    timeout_s=600,
                    gateway_url=gw.base_url,
                    api_key=key,
                    instructions=loaded.scenario.agent.instructions,
                )
            )
        finally:
            sandbox.stop()
        remaining = gw.gateway.replayer.remaining if gw.gateway.replayer else None
        calls = gw.telemetry(trial)
    stdout = (out / "stdout.txt").read_text()
    assert result.exit == "completed", f"{result.detail}\n{stdout[-3000:]}"
    assert remaining == 0, f"cassette not used up:\n{stdout[-3000:]}"
    assert calls, "the gateway saw no call from the agent"
    assert (out / transcript).exists(), sorted(p.name for p in out.iterdir())
    assert result.self_reported_usage.get("total_tokens", 0) > 0, result.self_reported_usage
    changed = git_status(ws)
    assert changed <= {"calc/__init__.py"}, f"the agent left files behind: {changed}"
    assert bool(changed) is (transcript not in NOOP_TRANSCRIPTS)
    assert _hidden_tests_pass(scenario, ws, tmp_path) is solves
    assert leftovers(client, trial) == []


def cassette_usage(path: Path) -> tuple[int, int, int]:
    """Calls and the prompt/completion tokens a cassette's responses declare."""
    calls = prompt = completion = 0
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        usage = json.loads(line)["response"].get("usage") or {}
        calls += 1
        prompt += int(usage.get("prompt_tokens", 0))
        completion += int(usage.get("completion_tokens", 0))
    return calls, prompt, completion


@pytest.mark.parametrize(
    ("agent", "cassette", "outcome"),
    [
        ("mini-swe-agent", "mini-py-fast-solve.jsonl", "success"),
        ("mini-swe-agent", "mini-py-fast-wrong.jsonl", "failed"),
        ("aider", "aider-py-fast-solve.jsonl", "success"),
        ("aider", "aider-py-fast-wrong.jsonl", "failed"),
        ("codex", "codex-py-fast-noop.jsonl", "failed"),
        ("opencode", "opencode-py-fast-noop.jsonl", "failed"),
        ("claude-code", "claude-py-fast-solve.jsonl", "success"),
        ("claude-code", "claude-py-fast-wrong.jsonl", "failed"),
        ("qwen-code", "qwen-py-fast-solve.jsonl", "success"),
        ("qwen-code", "qwen-py-fast-wrong.jsonl", "failed"),
        ("openhands", "openhands-py-fast-solve.jsonl", "success"),
        ("openhands", "openhands-py-fast-wrong.jsonl", "failed"),
    ],
)
def test_harness_exec_replay(
    agent: str, cassette: str, outcome: str, project: Path, cli: Any
) -> None:
    client = client_or_skip()
    shutil.copytree(SCENARIOS / "smoke", project / "scenarios" / "smoke")
    res = cli(
        "exec", "--agent", agent, "--model", "replay",
        "--replay", str(CASSETTES / cassette), "smoke/py-fast",
    )  # fmt: skip
    assert res.returncode in (0, 1), res.stderr
    reports = list((project / "results").rglob("verify/report.json"))
    assert len(reports) == 1, res.stdout + res.stderr
    report = json.loads(reports[0].read_text())
    assert report.get("outcome") == outcome, json.dumps(report, indent=1)[:3000]
    run_dir = reports[0].parents[1]
    run = json.loads((run_dir / "run.json").read_text())
    phases = json.loads((run_dir / "progress.json").read_text())["phases"]
    assert [p["outcome"] for p in phases if p["name"] == "agent"] == ["completed"], phases
    assert (run_dir / "agent" / "stdout.txt").is_file()
    trial = run["run_id"]
    assert leftovers(client, trial) == []
    # tokens and calls come from the gateway's telemetry, and equal what was replayed
    usage = json.loads((run_dir / "progress.json").read_text())["usage"]
    calls, prompt, completion = cassette_usage(CASSETTES / cassette)
    if all(
        json.loads(x)["response"].get("usage")
        for x in (CASSETTES / cassette).read_text().splitlines()
        if x.strip()
    ):
        assert (usage["calls"], usage["prompt_tokens"], usage["completion_tokens"]) == (
            calls,
            prompt,
            completion,
        )
    assert usage["calls"] == len((run_dir / "gateway" / "telemetry.jsonl").read_text().splitlines())
