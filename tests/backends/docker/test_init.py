"""The ``docker`` backend's own choices (backends/docker/__init__.py): images, provisioning
into a container's environment, the gateway beside the agent, verification's limits; the
engine, images and gateway are stand-ins here."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

import harness.backends.docker as docker_backend
from harness.agents.base import Agent
from harness.backends.base import GatewaySpec, VerifySpec
from harness.sandbox.base import SandboxSpec
from harness.sandbox.docker import DockerSandbox
from harness.scenario.load import load_scenario
from harness.verify.request import VerifyRequest
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.unit

SMOKE = load_scenario("smoke/py-fast", REPO_ROOT / "scenarios")


def agent(image: str | None) -> Agent:
    return cast(Agent, SimpleNamespace(image=lambda toolchain: image, version=lambda: "2.0"))


def test_the_agents_image_or_the_scenarios_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(docker_backend, "ensure_image", lambda name: f"ref:{name}")
    backend = docker_backend.DockerBackend()
    assert backend.name == "docker" and not backend.on_host
    assert backend.agent_image(agent("agent-aider"), SMOKE) == "ref:agent-aider"
    toolchain = SMOKE.scenario.toolchain()
    assert backend.agent_image(agent(None), SMOKE) == f"ref:env-{toolchain}"
    assert backend.agent_version(agent(None)) == "2.0"


def test_provision_mounts_and_expands_against_the_images_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    class Prov:
        def mounts(self) -> dict[str, str]:
            return {"/cache/go": "/opt/go:ro"}

        def env(self, on_host: bool, phase: str) -> dict[str, str]:
            assert (on_host, phase) == (False, "agent")
            return {"PATH": "/opt/go/bin:$PATH"}

        def record(self) -> dict[str, Any]:
            return {"go": "1.24"}

    monkeypatch.setattr(docker_backend, "provision", lambda *a, on_host: Prov())
    monkeypatch.setattr(docker_backend, "image_env", lambda tag: {"PATH": f"/in/{tag}"})
    spec = SandboxSpec(phase="agent", image="img", workspace=tmp_path)
    assert docker_backend.DockerBackend().provision(spec, SMOKE, tmp_path, "b") == {"go": "1.24"}
    assert spec.mounts == {"/cache/go": "/opt/go:ro"}
    assert spec.env == {"PATH": "/opt/go/bin:/in/img"}


def test_the_gateway_joins_a_docker_sandboxs_network_only(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[dict[str, Any]] = []

    class Gateway:
        def __init__(self, **kw: Any) -> None:
            made.append(kw)

        def start(self) -> None:
            pass

        def stop(self) -> None:
            pass

    monkeypatch.setattr(docker_backend, "TrialGateway", Gateway)
    spec = GatewaySpec(trial="t", agent="a", llm=cast(Any, "llm"))
    with pytest.raises(TypeError):
        docker_backend.DockerBackend().gateway(cast(Any, object()), spec)
    box = DockerSandbox.__new__(DockerSandbox)
    box.spec = SandboxSpec(phase="agent", labels={"harness.trial": "t"}, network="none")
    box._network = None  # no network of its own
    docker_backend.DockerBackend().gateway(box, spec)
    assert made[0]["network"] == "none"
    assert made[0]["labels"] == {"harness.trial": "t", "harness.phase": "gateway"}
    assert box.spec.labels == {"harness.trial": "t"}  # the sandbox's own labels untouched


def test_verify_hands_on_the_scenarios_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Any] = []
    monkeypatch.setattr(
        docker_backend,
        "verify_in_docker",
        lambda ws, req, **kw: seen.append((ws, kw)) or ("o", "id"),
    )
    request = VerifyRequest(scenario="s", baseline="b", seed="1", runner="pytest", hidden_root="/h")
    spec = VerifySpec(loaded=SMOKE, workspace=Path("/ws"), request=request, labels={"l": "1"})
    assert docker_backend.DockerBackend().verify(spec) == ("o", "id")
    env = SMOKE.scenario.environment
    assert seen == [
        (Path("/ws"), {"labels": {"l": "1"}, "cpus": env.cpus, "memory": env.memory,
                       "evidence_dest": None, "policy": SMOKE.scenario.sandbox}),
    ]  # fmt: skip


def test_an_images_environment_is_read_from_its_config(monkeypatch: pytest.MonkeyPatch) -> None:
    image = SimpleNamespace(attrs={"Config": {"Env": ["PATH=/usr/bin:/bin", "A=b=c", "BROKEN"]}})
    client = SimpleNamespace(images=SimpleNamespace(get=lambda tag: image))
    monkeypatch.setattr(docker_backend, "docker_client", lambda: client)
    assert docker_backend.image_env("x") == {"PATH": "/usr/bin:/bin", "A": "b=c"}
    image.attrs = {}
    assert docker_backend.image_env("x") == {}
