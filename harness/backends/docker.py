"""The ``docker`` backend: a fresh container per phase, the gateway a container beside
the agent's on its internal network, verification in the network-less scorer image."""

from __future__ import annotations

from harness.agents.base import Agent
from harness.backends.base import GatewaySpec, VerifySpec, started
from harness.fleet.container import TrialGateway
from harness.images import ensure_image
from harness.images.graph import ImageRef
from harness.sandbox.base import Sandbox, SandboxSpec
from harness.sandbox.docker import DockerSandbox
from harness.scenario import LoadedScenario
from harness.verify.container import verify_in_docker
from harness.verify.results import VerifyOutcome


class DockerBackend:
    name = "docker"

    def sandbox(self, spec: SandboxSpec) -> Sandbox:
        return DockerSandbox(spec)

    def agent_image(self, agent: Agent, loaded: LoadedScenario) -> ImageRef | None:
        """The agent's own image, or the scenario's environment image for built-ins."""
        toolchain = loaded.scenario.toolchain()
        return ensure_image(agent.image(toolchain) or f"env-{toolchain}")

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
        )
