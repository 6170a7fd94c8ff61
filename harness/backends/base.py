"""The backend protocol: where a trial's phases run.

A backend provides the sandbox of each phase, the images they start from, the trial's
gateway (placed where the agent can reach it and nothing else can), the verification
path, and the agent's version check. ``local`` runs on the host; ``docker`` in disposable
containers. A new backend (Kubernetes, Ray, a remote worker) is one module implementing
this protocol plus one line in ``harness.backends.BUILTIN`` (or a ``register_backend``
call), and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from harness.agents.base import Agent
    from harness.config.budget import Budget
    from harness.config.entrants import LLMEntry
    from harness.images.graph import ImageRef
    from harness.sandbox.base import Sandbox, SandboxSpec
    from harness.scenario.model import LoadedScenario
    from harness.verify.outcome import VerifyOutcome
    from harness.verify.request import VerifyRequest


@dataclass(frozen=True)
class GatewaySpec:
    """What a trial's gateway needs: whose calls it attributes, to which model, routed
    through which fleet file or served from which cassette, and whether to record."""

    trial: str
    agent: str
    llm: LLMEntry
    fleet_file: Path | None = None
    replay: Path | None = None
    record: bool = False
    budget: Budget | None = None  # the trial's limits; calls past them are refused


@dataclass(frozen=True)
class VerifySpec:
    """What a verification needs: the scenario, the workspace it grades a copy of, the
    request, the labels of what it starts, and where the suite's evidence goes."""

    loaded: LoadedScenario
    workspace: Path
    request: VerifyRequest
    labels: dict[str, str]
    evidence_dest: Path | None = None


class Gateway(Protocol):
    """One trial's model gateway, started: the agent's only address, with its key."""

    key: str
    image_id: str | None

    @property
    def url(self) -> str: ...

    def collect(self, dest: Path) -> dict[str, Any]:
        """Copy telemetry (and any recording) to ``dest``; return the trial's usage."""
        ...

    def stop(self) -> None:
        """Stop and remove the gateway; idempotent."""
        ...


class Backend(Protocol):
    """Where the phases of a trial run; chosen by name (``--sandbox NAME``)."""

    name: str
    on_host: bool  # phases see this machine's paths and toolchain (no image between)

    def sandbox(self, spec: SandboxSpec) -> Sandbox:
        """A not-yet-started sandbox for ``spec``; the caller starts and stops it."""
        ...

    def agent_image(self, agent: Agent, loaded: LoadedScenario) -> ImageRef | None:
        """The image the agent phase starts from (built when missing); None: no image."""
        ...

    def provision(
        self, spec: SandboxSpec, loaded: LoadedScenario, workspace: Path, baseline: str
    ) -> dict[str, Any]:
        """Expose the scenario's pinned toolchain and prepared dependencies to the agent's
        sandbox (``spec``, image already chosen); returns what was chosen, for run.json."""
        ...

    def agent_version(self, agent: Agent) -> str:
        """The version the agent reports where it will run (checked against its pin)."""
        ...

    def gateway(self, sandbox: Sandbox, spec: GatewaySpec) -> Gateway:
        """Start the trial's gateway where the started ``sandbox`` can reach it."""
        ...

    def verify(self, spec: VerifySpec) -> tuple[VerifyOutcome, str | None]:
        """Grade a copy of ``workspace``; returns the outcome and the verifier's image id."""
        ...


class _Startable(Protocol):
    def start(self) -> None: ...

    def stop(self) -> None: ...


S = TypeVar("S", bound=_Startable)


def started(thing: S) -> S:
    """``thing`` started, or stopped (its leftovers removed) when starting fails."""
    try:
        thing.start()
    except BaseException:
        thing.stop()
        raise
    return thing
