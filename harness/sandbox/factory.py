"""Pick a sandbox implementation by name (``--sandbox docker|local``)."""

from __future__ import annotations

from typing import Literal

from harness.errors import UserError
from harness.sandbox.base import Sandbox, SandboxSpec

SandboxKind = Literal["local", "docker"]
KINDS: tuple[str, ...] = ("docker", "local")


def make_sandbox(kind: SandboxKind, spec: SandboxSpec) -> Sandbox:
    """A not-yet-started sandbox of ``kind`` for ``spec``; the caller starts and stops it."""
    if kind == "docker":
        from harness.sandbox.docker import DockerSandbox

        return DockerSandbox(spec)
    if kind == "local":
        from harness.sandbox.local import LocalSandbox

        return LocalSandbox(spec)
    raise UserError(
        f"unknown sandbox {kind!r}", field="sandbox", fix=f"use one of: {', '.join(KINDS)}"
    )
