"""The ``local`` backend: every phase on the host, the gateway a thread on 127.0.0.1.

No isolation: for scenario authors and for the fast test suite. Verification grades a
temporary copy of the workspace, so the workspace itself is never touched.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from harness.agents.base import Agent
from harness.backends.base import GatewaySpec, VerifySpec, started
from harness.backends.local.gateway import LocalGateway
from harness.backends.local.verify import verify_local
from harness.images.graph import ImageRef
from harness.provision import provision
from harness.provision.toolchain import expand
from harness.sandbox.base import Sandbox, SandboxSpec
from harness.sandbox.local import LocalSandbox
from harness.scenario.model import LoadedScenario
from harness.verify.outcome import VerifyOutcome


class LocalBackend:
    name = "local"
    on_host = True

    def sandbox(self, spec: SandboxSpec) -> Sandbox:
        return LocalSandbox(spec)

    def agent_image(self, agent: Agent, loaded: LoadedScenario) -> ImageRef | None:
        return None  # the host is the environment

    def provision(
        self, spec: SandboxSpec, loaded: LoadedScenario, workspace: Path, baseline: str
    ) -> dict[str, Any]:
        prov = provision(loaded, workspace, baseline, on_host=self.on_host)
        spec.env.update(expand(prov.env(on_host=self.on_host, phase="agent"), dict(os.environ)))
        return prov.record()

    def agent_version(self, agent: Agent) -> str:
        return agent.version()  # a CLI agent's pin is its image's: checked the same way

    def gateway(self, sandbox: Sandbox, spec: GatewaySpec) -> LocalGateway:
        return started(
            LocalGateway(
                trial=spec.trial,
                agent=spec.agent,
                llm=spec.llm,
                fleet_file=spec.fleet_file,
                replay=spec.replay,
                record=spec.record,
                budget=spec.budget,
            )
        )

    def verify(self, spec: VerifySpec) -> tuple[VerifyOutcome, str | None]:
        request = spec.request
        if spec.evidence_dest is not None:
            request = request.model_copy(update={"evidence_dir": str(spec.evidence_dest)})
        return verify_local(spec.workspace, request), None
