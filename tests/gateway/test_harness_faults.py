"""Never charge the agent for the harness: a fleet that cannot be reached, the trial's own
model not served. The gateway records a harness fault at the first call; the trial reads
it (``GET /v1/harness/budget``'s ``fault``), stops the agent within seconds and ends
``error`` (exit 3) naming the cause. And never let the agent turn its failure into
``error``: a request it chose that cannot be served (a call its cassette does not hold, a
model it named that nobody serves) is refused (``refused``), no fault."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from harness.agents.base import AgentResult
from harness.errors import InfraError
from harness.fleet.config import parse_fleet
from harness.gateway.server import GatewayServer
from harness.sandbox.base import SandboxSpec
from harness.sandbox.local import LocalSandbox
from harness.testing.lmstudio import TestHost
from harness.trial import containment
from tests.conftest import REPO_ROOT
from tests.support.calc import add_entrants, harness, write_calc

MSGS = [{"role": "user", "content": "please fix add"}]


def _call(gw: GatewayServer, key: str, model: str = "coder") -> httpx.Response:
    return httpx.post(
        gw.base_url + "/chat/completions",
        json={"model": model, "messages": MSGS},
        headers={"Authorization": f"Bearer {key}"},
        timeout=60,
    )


def _fault(gw: GatewayServer, key: str, field: str = "fault") -> Any:
    r = httpx.get(gw.base_url + "/harness/budget", headers={"Authorization": f"Bearer {key}"})
    r.raise_for_status()
    return r.json()[field]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.unit
def test_a_cassette_miss_is_the_agent_s_refusal_not_a_fault(tmp_path: Path) -> None:
    tape = tmp_path / "other.jsonl"
    tape.write_text(
        json.dumps(
            {
                "request": {"model": "replay", "last_message": {"content": {"$contains": "zzz"}}},
                "response": {"content": "hi"},
            }
        )
        + "\n"
    )
    with GatewayServer(replay=tape) as gw:
        key = gw.issue_key("t1", "a", "coder")
        assert _fault(gw, key) is None
        assert _call(gw, key).status_code == 400
        assert _fault(gw, key) is None  # the agent's request: never the harness's error
        fault = _fault(gw, key, "refused")
    assert "other.jsonl" in fault and "request #1" in fault and "--model replay" in fault
    assert "\n" not in fault


@pytest.mark.unit
def test_an_exhausted_cassette_is_a_refusal(tmp_path: Path) -> None:
    tape = tmp_path / "one.jsonl"
    tape.write_text(json.dumps({"request": {}, "response": {"content": "hi"}}) + "\n")
    with GatewayServer(replay=tape) as gw:
        key = gw.issue_key("t1", "a", "coder")
        assert _call(gw, key).status_code == 200
        assert _fault(gw, key) is None  # a matching call is no fault
        assert _call(gw, key).status_code == 400
        assert _fault(gw, key) is None and "exhausted" in _fault(gw, key, "refused")


@pytest.mark.unit
def test_an_unreachable_fleet_and_an_unserved_model_are_told_apart(tmp_path: Path) -> None:
    dead = f"http://127.0.0.1:{_free_port()}"  # nothing listens there
    fleet = parse_fleet(
        {
            "hosts": [{"name": "gone", "base_url": dead}],
            "models": {"coder": {"upstream": "org/m"}},
        }
    )
    with GatewayServer(fleet) as gw:
        key = gw.issue_key("t1", "a", "coder")
        began = time.monotonic()
        assert _call(gw, key).status_code >= 500
        assert time.monotonic() - began < 10  # every host is down: no waiting out
        assert "cannot serve model 'coder'" in _fault(gw, key)
        other = gw.issue_key("t2", "a", None)
        assert _call(gw, other, model="nobody-serves-this").status_code == 404
        assert _fault(gw, other) is None  # a model the agent named: its own failure
        assert "'nobody-serves-this' is not served" in _fault(gw, other, "refused")
    with GatewayServer(fleet) as gw:
        pinned = gw.issue_key("t3", "a", "elsewhere")  # the trial's own model, unserved
        assert _call(gw, pinned, model="elsewhere").status_code == 404
        assert "'elsewhere' is not served" in _fault(gw, pinned)


@pytest.mark.unit
def test_a_busy_host_is_not_a_fault(tmp_path: Path) -> None:
    with TestHost(models=["org/m"]) as host:
        fleet = parse_fleet(
            {
                "hosts": [{"name": "h", "base_url": host.url}],
                "models": {"coder": {"upstream": "org/m"}},
                "routing": {"max_attempts": 1},
            }
        )
        host.set_faults(error_rate=1.0)
        with GatewayServer(fleet) as gw:
            key = gw.issue_key("t1", "a", "coder")
            assert _call(gw, key).status_code >= 500
            assert _fault(gw, key) is None  # overloaded: the agent may retry


class FaultyGateway:
    """Answers like ``GET /v1/harness/budget``: a fault appears after a delay."""

    def __init__(self, after_s: float) -> None:
        self.at = time.monotonic() + after_s

    def budget_state(self) -> dict[str, Any]:
        late = time.monotonic() >= self.at
        return {
            "exhausted": None,
            "used": {"tokens": 0, "cost_usd": 0.0, "calls": 1},
            "fault": "cassette x.jsonl does not match request #1" if late else None,
        }


@pytest.mark.unit
def test_the_guard_stops_the_agent_on_a_fault_without_any_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(containment, "FAULT_POLL_S", 0.1)
    guard = containment.Guard(LocalSandbox(SandboxSpec(phase="agent", workspace=tmp_path)))
    began = time.monotonic()
    with guard.watching(FaultyGateway(after_s=0.3)):
        res = guard.sandbox.exec(["sleep", "30"], timeout=60)
        result = guard.verdict(AgentResult(exit="crashed", returncode=res.returncode))
    assert time.monotonic() - began < 10
    assert result.exit == "crashed"  # not a limit nor a budget: the trial raises instead
    with pytest.raises(InfraError, match=r"harness fault.*x\.jsonl"):
        guard.raise_fault()


# ---- whole trials -------------------------------------------------------------------------

AGENT = """
  - name: retrier
    version: "1.0"
    supports-llms: [replay-test, coder]
    adapter: tests.support.agents:RetryingAgent
"""
LLM = """
  - name: replay-test
    model: replay-model-1
  - name: coder
    model: org/m
    local: true
"""


@pytest.fixture
def scenario(project: Path, tmp_path: Path) -> Path:
    folder = write_calc(project, tmp_path / "src")
    add_entrants(project, AGENT, LLM)
    return folder


def _report(project: Path) -> dict[str, Any]:
    (run,) = list((project / "results" / "t" / "calc").iterdir())
    return dict(json.loads((run / "verify" / "report.json").read_text()))


def _other_cassette(tmp_path: Path) -> Path:
    tape = tmp_path / "another-scenario.jsonl"
    tape.write_text(
        json.dumps(
            {
                "request": {"last_message": {"content": {"$contains": "calc.clamp"}}},
                "response": {"content": "done"},
            }
        )
        + "\n"
    )
    return tape


def _assert_error_soon(res: subprocess.CompletedProcess[str], began: float, word: str) -> None:
    assert res.returncode == 3, res.stdout + res.stderr
    assert time.monotonic() - began < 120  # the agent would retry for ten minutes
    assert word in res.stdout + res.stderr


@pytest.mark.integration
def test_local_trial_whose_calls_match_no_cassette_is_the_agent_s_failure(
    project: Path, scenario: Path, tmp_path: Path
) -> None:
    began = time.monotonic()
    res = harness(
        project,
        *("exec", "--agent", "retrier", "--model", "replay-test", "--sandbox", "local"),
        *("--replay", str(_other_cassette(tmp_path)), "t/calc"),
    )
    assert res.returncode == 1, res.stdout + res.stderr  # failed: never error, exit 3
    assert time.monotonic() - began < 120  # stopped at once, not retrying for ten minutes
    assert _report(project)["outcome"] == "failed"


@pytest.mark.integration
def test_local_trial_against_an_unreachable_fleet_is_an_error(
    project: Path, scenario: Path
) -> None:
    (project / "fleet.yml").write_text(
        f"hosts:\n  - {{name: gone, base_url: 'http://127.0.0.1:{_free_port()}'}}\n"
        "models:\n  coder: {upstream: org/m}\n"
    )
    began = time.monotonic()
    res = harness(
        project, "exec", "--agent", "retrier", "--model", "coder", "--sandbox", "local", "t/calc"
    )
    _assert_error_soon(res, began, "cannot serve model")
    assert _report(project)["outcome"] == "error"


@pytest.mark.docker
@pytest.mark.integration
def test_docker_trial_whose_calls_match_no_cassette_is_the_agent_s_failure(
    project: Path, scenario: Path, tmp_path: Path
) -> None:
    began = time.monotonic()
    res = harness(
        project,
        *("exec", "--agent", "retrier", "--model", "replay-test"),
        *("--replay", str(_other_cassette(tmp_path)), "t/calc"),
    )
    assert res.returncode == 1, res.stdout + res.stderr
    assert time.monotonic() - began < 120
    assert _report(project)["outcome"] == "failed"
    (run,) = list((project / "results" / "t" / "calc").iterdir())
    said = (run / "gateway" / "transcript.jsonl").read_text().splitlines()[0]
    assert "does not match request #1" in json.loads(said)["error"]  # the viewer shows why


@pytest.mark.unit
def test_model_mismatch_reads_the_first_request() -> None:
    from harness.fleet.cassette import model_mismatch

    tape = REPO_ROOT / "tests" / "cassettes" / "mini-py-fast-solve.jsonl"
    assert model_mismatch(tape, "replay") is None
    wrong = model_mismatch(tape, "qwen/qwen3-coder-30b")
    assert wrong is not None and "replay" in wrong and "qwen3-coder-30b" in wrong


@pytest.mark.integration
def test_replay_without_the_cassettes_model_is_refused_before_anything_is_written(
    project: Path, scenario: Path
) -> None:
    tape = REPO_ROOT / "tests" / "cassettes" / "mini-py-fast-solve.jsonl"
    res = harness(
        project,
        *("exec", "--agent", "retrier", "--model", "coder", "--sandbox", "local"),
        *("--replay", str(tape), "t/calc"),
    )
    assert res.returncode == 2, res.stdout + res.stderr
    assert "--model" in res.stderr and "another model" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
    assert not (project / "results").exists() or not any((project / "results").rglob("*.json"))


class DeadGatewayBox:
    """A gateway container whose process died at start: health fails, the pid is gone."""

    def __init__(self) -> None:
        self.calls = 0

    def exec(self, cmd: list[str], timeout: float | None = None) -> Any:
        from harness.sandbox.base import ExecResult

        self.calls += 1
        if cmd[:2] == ["python3", "-c"]:
            return ExecResult(3, "", "", 0.1)
        return ExecResult(0, "Traceback ...\nValueError: bad fleet\n", "", 0.1)


@pytest.mark.unit
def test_a_gateway_that_dies_at_start_is_an_error_at_once() -> None:
    from harness.backends.docker.gateway import TrialGateway
    from harness.config.entrants import LLMEntry

    gw = TrialGateway(
        trial="t",
        agent="a",
        llm=LLMEntry(name="m", model="m"),
        network="n",
        labels={},
        replay=Path("x.jsonl"),
    )
    gw.sandbox = DeadGatewayBox()
    began = time.monotonic()
    with pytest.raises(InfraError, match=r"gateway exited at start: .*bad fleet"):
        gw._wait_healthy()
    assert time.monotonic() - began < 5 and gw.sandbox.calls == 2
