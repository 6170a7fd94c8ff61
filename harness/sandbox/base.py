"""The sandbox protocol: a small surface every place-where-code-runs implements.

A sandbox is created from a ``SandboxSpec``, started, used through ``exec`` and the copy
methods, and always stopped (which removes it). Implementations must make ``stop`` safe
to call more than once and after a failed ``start``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

from harness.scenario.policy import DEFAULT_POLICY, SandboxPolicy

Phase = Literal["agent", "verify", "setup", "control", "gateway"]


@dataclass(frozen=True)
class ExecResult:
    """Outcome of one command: exit code (None when killed), output, and timing.

    ``limit`` names the limit that stopped the command (``"disk"``, ``"memory"``,
    ``"pids"``, ``"output"``, or an interrupt reason such as ``"budget"``); ``dropped``
    counts the output bytes past the cap that were not kept.
    """

    returncode: int | None
    stdout: str
    stderr: str
    duration_s: float
    timed_out: bool = False
    limit: str | None = None
    limit_detail: str = ""
    dropped: int = 0

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out


@dataclass
class SandboxSpec:
    """What a sandbox needs to know before it starts.

    ``workspace`` is the host directory that becomes the project directory (bind-mounted
    read-write in Docker for the agent phase; for the verify phase it is copied in).
    ``network`` is ``"none"``, ``"internal"`` (reaches only the gateway) or a network name.
    """

    phase: Phase
    image: str | None = None
    workspace: Path | None = None
    mount_workspace: bool = True
    project_dir: str = "/workspace"
    env: dict[str, str] = field(default_factory=dict)
    cpus: float | None = None
    memory: str | None = None
    pids: int | None = 512
    network: str = "none"
    labels: dict[str, str] = field(default_factory=dict)
    # host path -> path inside, read-only (a ``:rw`` suffix makes it writable)
    mounts: dict[str, str] = field(default_factory=dict)
    policy: SandboxPolicy = DEFAULT_POLICY
    # extra writable, size-capped folders (absolute path -> size such as "2g"); Docker only
    scratch: dict[str, str] = field(default_factory=dict)


@runtime_checkable
class Sandbox(Protocol):
    """Start, run commands, move files, stop. Nothing more."""

    spec: SandboxSpec

    @property
    def project_dir(self) -> str:
        """Path of the project directory as seen by commands inside the sandbox."""
        ...

    def start(self) -> None: ...

    def exec(
        self,
        cmd: list[str],
        *,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        timeout: float | None = None,
    ) -> ExecResult: ...

    def copy_in(self, src: Path, dest: str) -> None:
        """Copy a host file or directory to ``dest`` (an absolute path inside)."""
        ...

    def copy_out(self, src: str, dest: Path, max_bytes: int | None = None) -> None:
        """Copy ``src`` (inside) to the host path ``dest``. Over ``max_bytes`` (what it
        would copy), ``harness.util.agentfiles.OverCap`` is raised and nothing copied."""
        ...

    def stop(self) -> None:
        """Stop and remove everything this sandbox created; idempotent."""
        ...

    def interrupt(self, reason: str) -> None:
        """Stop the running command from another thread; its result says ``limit=reason``."""
        ...
