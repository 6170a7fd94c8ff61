"""The ``local`` backend: every phase on the host (backends/local/__init__.py); its
provisioning, gateway and verifier are stand-ins here."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

import harness.backends.local as local
from harness.agents.base import Agent
from harness.backends.base import GatewaySpec, VerifySpec
from harness.sandbox.base import SandboxSpec
from harness.sandbox.local import LocalSandbox
from harness.scenario.load import load_scenario
from harness.verify.outcome import VerifyOutcome
from harness.verify.request import VerifyRequest
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.unit

SMOKE = load_scenario("smoke/py-fast", REPO_ROOT / "scenarios")


def test_the_host_is_the_environment(tmp_path: Path) -> None:
    backend = local.LocalBackend()
    assert backend.name == "local" and backend.on_host
    spec = SandboxSpec(phase="agent", workspace=tmp_path)
    assert isinstance(backend.sandbox(spec), LocalSandbox)
    agent = cast(Agent, SimpleNamespace(version=lambda: "9.9"))
    assert backend.agent_image(agent, SMOKE) is None and backend.agent_version(agent) == "9.9"


def test_provision_puts_the_toolchain_in_the_agents_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[Any] = []

    class Prov:
        def env(self, on_host: bool, phase: str) -> dict[str, str]:
            asked.append((on_host, phase))
            return {"PATH": "/tool/bin:$PATH", "GOFLAGS": "-mod=mod"}

        def record(self) -> dict[str, Any]:
            return {"go": "1.24"}

    monkeypatch.setattr(local, "provision", lambda *a, on_host: asked.append(on_host) or Prov())
    monkeypatch.setenv("PATH", "/usr/bin")
    spec = SandboxSpec(phase="agent", workspace=tmp_path)
    assert local.LocalBackend().provision(spec, SMOKE, tmp_path, "b" * 40) == {"go": "1.24"}
    assert asked == [True, (True, "agent")]
    assert spec.env == {"PATH": "/tool/bin:/usr/bin", "GOFLAGS": "-mod=mod"}
    assert os.environ["PATH"] == "/usr/bin"  # the process's own environment untouched


def test_the_gateway_is_started_with_the_trials_spec(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[Any] = []

    class Gateway:
        def __init__(self, **kw: Any) -> None:
            self.kw, self.running = kw, False
            made.append(self)

        def start(self) -> None:
            self.running = True

        def stop(self) -> None:
            self.running = False

    monkeypatch.setattr(local, "LocalGateway", Gateway)
    llm = cast(Any, SimpleNamespace(name="m"))
    spec = GatewaySpec(trial="t1", agent="aider", llm=llm, record=True)
    got = local.LocalBackend().gateway(cast(Any, None), spec)
    assert got is made[0] and made[0].running
    assert made[0].kw == {
        "trial": "t1", "agent": "aider", "llm": llm, "fleet_file": None, "replay": None,
        "record": True, "budget": None,
    }  # fmt: skip


def test_verify_grades_with_the_workspace_cap_and_scrubs_the_evidence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[Any] = []
    done = VerifyOutcome.ungraded(report_text="graded\n")

    def fake(workspace: Path, request: VerifyRequest, cap: int | None) -> VerifyOutcome:
        seen.append((workspace, request.evidence_dir, cap))
        (evidence / "link").symlink_to("/etc/passwd")  # what an app might leave
        return done

    monkeypatch.setattr(local, "verify_local", fake)
    evidence = tmp_path / "evidence"
    evidence.mkdir()
    request = VerifyRequest(scenario="s", baseline="b", seed="1", runner="pytest", hidden_root="/h")
    spec = VerifySpec(
        loaded=SMOKE, workspace=tmp_path / "ws", request=request, labels={},
        evidence_dest=evidence,
    )  # fmt: skip
    assert local.LocalBackend().verify(spec) == (done, None)
    cap = SMOKE.scenario.sandbox.bytes("workspace_size")
    assert seen == [(tmp_path / "ws", str(evidence), cap)]
    assert not (evidence / "link").is_symlink()  # scrubbed
    plain = VerifySpec(loaded=SMOKE, workspace=tmp_path / "ws", request=request, labels={})
    local.LocalBackend().verify(plain)
    assert seen[-1][1] is None
