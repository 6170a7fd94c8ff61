"""Budgets, trial side: the scenario's ``budget:`` and the job's ``--budget-*`` merge; the
trial watches its gateway's ``GET /v1/harness/budget`` and stops the agent once any limit
(tokens, cost-usd, calls) is exhausted; the phase ends ``budget`` and the trial ``failed``
with reason ``budget``; reports count budget hits per entrant."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from harness.agents.base import AgentResult
from harness.config.budget import Budget
from harness.job.plan import JobConfig
from harness.report.collect import RunResult
from harness.report.render import CSV_FIELDS
from harness.report.summary import summarise_entrant
from harness.sandbox.base import SandboxSpec
from harness.sandbox.local import LocalSandbox
from harness.scenario.model import Scenario
from harness.trial import containment
from tests.conftest import REPO_ROOT, make_bundle

KINDS = {
    "tokens": ({"tokens": 100}, {"tokens": 150, "cost_usd": 0.0, "calls": 1}),
    "cost-usd": ({"cost_usd": 0.01}, {"tokens": 10, "cost_usd": 0.02, "calls": 1}),
    "calls": ({"calls": 2}, {"tokens": 10, "cost_usd": 0.0, "calls": 2}),
}


class FakeGateway:
    """Answers like ``GET /v1/harness/budget`` (the contract), exhausted after a delay."""

    def __init__(self, budget: Budget, used: dict[str, Any], after_s: float) -> None:
        self.budget, self.used, self.at = budget, used, time.monotonic() + after_s

    def budget_state(self) -> dict[str, Any]:
        now = time.monotonic() >= self.at
        used = self.used if now else {"tokens": 0, "cost_usd": 0.0, "calls": 0}
        return {
            "exhausted": self.budget.exceeded(used["tokens"], used["cost_usd"], used["calls"]),
            "used": used,
            "limit": self.budget.model_dump(),
        }


@pytest.fixture
def fast_poll(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(containment, "BUDGET_POLL_S", 0.1)


def _stop_agent(sandbox: Any, kind: str) -> AgentResult:
    limits, used = KINDS[kind]
    budget = Budget(**limits)
    guard = containment.Guard(sandbox, budget)
    began = time.monotonic()
    with guard.watching(FakeGateway(budget, used, after_s=0.3)):
        res = guard.sandbox.exec(["sleep", "30"], timeout=60)
        later = guard.sandbox.exec(["echo", "more"], timeout=10)  # refused once stopped
        result = guard.verdict(AgentResult(exit="crashed", returncode=res.returncode))
    assert time.monotonic() - began < 10
    assert res.limit == "budget" and later.limit == "budget" and later.stdout == ""
    assert guard.exhausted == kind
    return result


@pytest.mark.unit
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_local_agent_is_stopped_when_the_budget_is_exhausted(
    fast_poll: None, tmp_path: Path, kind: str
) -> None:
    box = LocalSandbox(SandboxSpec(phase="agent", workspace=tmp_path))
    result = _stop_agent(box, kind)
    assert result.exit == "budget" and result.detail.startswith(f"budget: {kind} exhausted")


@pytest.mark.docker
@pytest.mark.integration
def test_docker_agent_is_stopped_for_every_budget_kind(
    fast_poll: None, client: Any, image: str, trial: str, tmp_path: Path
) -> None:
    from harness.sandbox.docker import DockerSandbox

    for kind in sorted(KINDS):
        spec = SandboxSpec(
            phase="agent", image=image, workspace=tmp_path, labels={"harness.trial": trial}
        )
        with DockerSandbox(spec, client=client) as box:
            assert _stop_agent(box, kind).exit == "budget"
    query = {"label": [f"harness.trial={trial}"]}
    assert client.containers.list(all=True, filters=query) == []
    assert client.volumes.list(filters=query) == []


@pytest.mark.unit
def test_unlimited_budget_watches_nothing(tmp_path: Path) -> None:
    guard = containment.Guard(LocalSandbox(SandboxSpec(phase="agent", workspace=tmp_path)))
    assert guard.budget is None
    with guard.watching(object()):
        pass
    assert guard.verdict(AgentResult(exit="completed")).exit == "completed"


@pytest.mark.unit
def test_scenario_budget_and_sandbox_fields_and_job_override() -> None:
    base = {
        "name": "x",
        "repo": "r",
        "commit": "abcdef0",
        "classification": {"type": "fix-bug"},
        "agent": {"instructions": "i"},
        "verify": {},
    }
    scn = Scenario.model_validate(
        {
            **base,
            "budget": {"tokens": 1000, "cost-usd": 0.5},
            "sandbox": {"read-only-root": False, "capabilities": ["cap_net_raw"]},
        }
    )
    assert scn.sandbox.record()["relaxed"] == ["read-only-root", "non-root", "cap:NET_RAW"]
    merged = scn.budget.merged(containment.budget_flags(None, None, 3))
    assert (merged.tokens, merged.cost_usd, merged.calls) == (1000, 0.5, 3)
    assert containment.budget_flags(None, None, None) is None
    with pytest.raises(ValueError, match="unknown capability"):
        Scenario.model_validate({**base, "sandbox": {"capabilities": ["ALL_OF_THEM"]}})
    with pytest.raises(ValueError):
        Scenario.model_validate({**base, "budget": {"tokens": 0}})
    # a job without budget keeps the name it always had; one with a budget gets its own
    plain = JobConfig(agents=["a"], scenarios=["s"])
    assert plain.fingerprint() == JobConfig(agents=["a"], scenarios=["s"]).fingerprint()
    capped = JobConfig(agents=["a"], scenarios=["s"], budget=Budget(calls=3))
    assert capped.fingerprint() != plain.fingerprint()


@pytest.mark.unit
def test_report_counts_budget_and_limit_hits(tmp_path: Path) -> None:
    def run(reason: str | None) -> RunResult:
        report = {"reason": reason} if reason else {}
        return RunResult(
            tmp_path, "r", "s", "e", "a", "1", "m", "failed", 0.0, None, "", 1.0, report=report
        )

    summary = summarise_entrant([run("budget"), run("budget"), run("limit: disk"), run(None)])
    assert (summary.budget_hits, summary.limit_hits) == (2, 1)
    assert "budget_hits" in CSV_FIELDS and summary.as_dict()["budget_hits"] == 2


@pytest.mark.unit
def test_the_budget_line_counts_what_the_gateway_measured(tmp_path: Path) -> None:
    """The poll that stops the agent can see a call admitted but not yet counted; the
    line the run keeps is counted again from the turn's telemetry (it said ``tokens 0``
    after 817 tokens, issue 49)."""
    guard = containment.Guard(LocalSandbox(SandboxSpec(phase="agent", workspace=tmp_path)))
    guard.exhausted, guard.used = "calls", {"tokens": 0, "cost_usd": 0.0, "calls": 1}
    stopped = AgentResult(exit="budget", detail="budget: calls exhausted (calls 1, tokens 0)")
    usage = {"calls": 1, "prompt_tokens": 700, "completion_tokens": 117, "cost_usd": 0.002}
    result = guard.measured(stopped, usage)
    assert result.detail == "budget: calls exhausted (calls 1, cost_usd 0.002, tokens 817)"
    done = AgentResult(exit="completed", detail="done")
    assert guard.measured(done, usage) is done  # only a budget stop is restated


# -- the whole trial against the fleet's gateway (contract in COORD.md) -------------------

FILES = {"calc.py": "def add(a, b):\n    return a - b\n"}
LOOP = (
    'while true; do curl -s -o /dev/null -H "Authorization: Bearer $KEY" '
    '-H "Content-Type: application/json" '
    '-d \'{"model": "replay-model-1", "messages": [{"role": "user", "content": "again"}]}\' '
    '"$GW/chat/completions"; sleep 0.2; done'
)


def _gateway_takes_budget() -> bool:
    from harness.backends.docker.gateway import TrialGateway

    return "budget" in inspect.signature(TrialGateway).parameters


@pytest.mark.docker
@pytest.mark.integration
@pytest.mark.skipif(
    not _gateway_takes_budget(), reason="the gateway's budget enforcement (fleet) has not landed"
)
def test_trial_over_budget_fails_with_reason_budget(project: Path, tmp_path: Path) -> None:
    folder = project / "scenarios" / "t" / "calc"
    folder.mkdir(parents=True)
    sha = make_bundle(tmp_path / "src", folder / "repo.bundle", FILES)
    (folder / "scenario.yml").write_text(
        f"name: calc\nrepo: repo.bundle\ncommit: {sha}\nclassification: {{type: fix-bug}}\n"
        "agent: {instructions: fix add}\nenvironment: {image: python, agent-timeout: 60s}\n"
        "verify:\n  must-modify: calc.py\n  copy: [{from: hidden/test_h.py, to: .}]\n"
        "  tests: [test_h.py]\nbudget: {tokens: 1000000}\n"
    )
    (folder / "hidden").mkdir()
    (folder / "hidden" / "test_h.py").write_text("def test_h():\n    assert True\n")
    with (project / "agents.yml").open("a") as fh:
        fh.write(
            "\n  - name: toolcall\n    version: '1.0'\n    supports-llms: [replay-test]\n"
            "    adapter: tests.support.agents:ToolCallAgent\n"
        )
    with (project / "llms.yml").open("a") as fh:
        fh.write("\n  - name: replay-test\n    model: replay-model-1\n")
    # the cassette holds more answers than the budget lets through: the budget, not an
    # exhausted cassette (a harness fault, exit 3), is what ends the trial
    tape = tmp_path / "loop.jsonl"
    answer = {
        "request": {"model": "replay-model-1"},
        "response": {
            "tool_calls": [{"name": "bash", "arguments": {"command": LOOP}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        },
    }
    tape.write_text("".join(json.dumps(answer) + "\n" for _ in range(4)))
    env = {**os.environ, "HARNESS_SCENARIO_ROOT": str(project / "scenarios")}
    env["PYTHONPATH"] = str(REPO_ROOT)
    env.pop("HARNESS_FLEET", None)
    began = time.monotonic()
    res = subprocess.run(
        [
            *(sys.executable, "-m", "harness.cli", "exec", "t/calc", "--agent", "toolcall"),
            *("--model", "replay-test", "--replay", str(tape), "--budget-calls", "2"),
        ],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert res.returncode == 1, res.stdout + res.stderr
    assert time.monotonic() - began < 120  # stopped, not timed out
    (run,) = list((project / "results" / "t" / "calc").iterdir())
    report = json.loads((run / "verify" / "report.json").read_text())
    assert (report["outcome"], report["reason"]) == ("failed", "budget")
    assert report["budget"] == {"tokens": 1000000, "calls": 2}
    rows = [
        json.loads(line) for line in (run / "gateway" / "telemetry.jsonl").read_text().splitlines()
    ]
    served = [r for r in rows if r.get("status") != "budget"]
    assert len(served) == 2  # usage up to the cut is exact


@pytest.mark.unit
def test_threads_are_not_left_running() -> None:
    assert not [t for t in threading.enumerate() if t.name == "harness-budget"]
