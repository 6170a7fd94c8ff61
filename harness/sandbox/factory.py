"""Make a sandbox by backend name (``--sandbox docker|local``)."""

from __future__ import annotations

from harness.backends import get_backend
from harness.sandbox.base import Sandbox, SandboxSpec


def make_sandbox(kind: str, spec: SandboxSpec) -> Sandbox:
    """A not-yet-started sandbox of backend ``kind`` for ``spec``; the caller starts and
    stops it. An unknown name is a UserError."""
    return get_backend(kind).sandbox(spec)
