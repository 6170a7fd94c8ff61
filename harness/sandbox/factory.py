"""Deprecated: make a sandbox by backend name; hold a ``Backend`` instead
(``harness.backends.get_backend(kind).sandbox(spec)``). Kept for one minor version."""

from __future__ import annotations

import warnings

from harness.sandbox.base import Sandbox, SandboxSpec


def make_sandbox(kind: str, spec: SandboxSpec) -> Sandbox:
    """A not-yet-started sandbox of backend ``kind`` for ``spec``."""
    from harness.backends import get_backend

    warnings.warn(
        "harness.sandbox.factory is deprecated: use harness.backends.get_backend(kind).sandbox",
        DeprecationWarning,
        stacklevel=2,
    )
    return get_backend(kind).sandbox(spec)
