"""The ``docker`` backend: a fresh container per phase, the gateway a container beside
the agent's on its internal network, verification in the network-less scorer image."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.agents.base import Agent
from harness.backends.base import GatewaySpec, VerifySpec, started
from harness.backends.docker.gateway import TrialGateway
from harness.backends.docker.verify import verify_in_docker
from harness.images import ensure_image
from harness.images.graph import ImageRef
from harness.provision import provision
from harness.provision.toolchain import expand
from harness.sandbox.base import Sandbox, SandboxSpec
from harness.sandbox.docker import DockerSandbox
from harness.sandbox.engine import docker_client
from harness.scenario.model import LoadedScenario
from harness.verify.outcome import VerifyOutcome


class DockerBackend:
    name = "docker"
    on_host = False

    def preflight(self) -> None:
        """The engine answers, before anything of a run is written (names what it tried)."""
        docker_client(timeout=10)

    def sandbox(self, spec: SandboxSpec) -> Sandbox:
        return DockerSandbox(spec)

    def agent_image(self, agent: Agent, loaded: LoadedScenario) -> ImageRef | None:
        """The agent's own image, or the scenario's environment image for built-ins."""
        toolchain = loaded.scenario.toolchain()
        return ensure_image(agent.image(toolchain) or f"env-{toolchain}")

    def provision(
        self, spec: SandboxSpec, loaded: LoadedScenario, workspace: Path, baseline: str
    ) -> dict[str, Any]:
        """Host folders mounted read-only, variables pointing at their inside paths."""
        prov = provision(loaded, workspace, baseline, on_host=self.on_host)
        spec.mounts.update(prov.mounts())
        base = image_env(spec.image) if spec.image else {}
        spec.env.update(expand(prov.env(on_host=self.on_host, phase="agent"), base))
        return prov.record()

    def agent_version(self, agent: Agent) -> str:
        return agent.version()  # a CLI agent reports it from a throwaway container

    def gateway(self, sandbox: Sandbox, spec: GatewaySpec) -> TrialGateway:
        if not isinstance(sandbox, DockerSandbox):
            raise TypeError("the docker gateway joins a docker sandbox's network")
        return started(
            TrialGateway(
                trial=spec.trial,
                agent=spec.agent,
                llm=spec.llm,
                network=sandbox.network_name or "none",
                labels=dict(sandbox.spec.labels, **{"harness.phase": "gateway"}),
                fleet_file=spec.fleet_file,
                replay=spec.replay,
                record=spec.record,
                budget=spec.budget,
            )
        )

    def verify(self, spec: VerifySpec) -> tuple[VerifyOutcome, str | None]:
        env = spec.loaded.scenario.environment
        return verify_in_docker(
            spec.workspace,
            spec.request,
            labels=spec.labels,
            cpus=env.cpus,
            memory=env.memory,
            evidence_dest=spec.evidence_dest,
            policy=spec.loaded.scenario.sandbox,
        )


def image_env(tag: str) -> dict[str, str]:
    """The environment an image's containers start with (for ``$PATH``)."""
    pairs = docker_client().images.get(tag).attrs.get("Config", {}).get("Env") or []
    return dict(p.split("=", 1) for p in pairs if "=" in p)
