"""Backends by name: ``local`` (the host) and ``docker`` (disposable containers).

``get_backend("docker")`` imports the backend's module only when it is asked for, so a
host-only run never loads the Docker SDK. Add a backend with one line in ``BUILTIN``
(``name: "package.module:Class"``), from a plugin package with an entry point in the
``harness.backends`` group, or at run time with ``register_backend`` (see util/registry.py).
"""

from __future__ import annotations

from collections.abc import Callable

from harness.backends.base import Backend, Gateway, GatewaySpec, VerifySpec
from harness.util.registry import Registry

BUILTIN: dict[str, str] = {
    "docker": "harness.backends.docker:DockerBackend",
    "local": "harness.backends.local:LocalBackend",
}
BACKENDS: Registry[Callable[[], Backend]] = Registry(
    "sandbox", "harness.backends", BUILTIN, field="--sandbox"
)


def register_backend(name: str, factory: Callable[[], Backend]) -> None:
    """Make ``--sandbox NAME`` run trials on ``factory()``."""
    BACKENDS.register(name, factory)


def backend_names() -> list[str]:
    """Every backend name, the default (``docker``) first."""
    return BACKENDS.names()


def check_backend(name: str, field: str = "--sandbox") -> str:
    """``name`` when it names a backend; otherwise a UserError listing the choices."""
    return BACKENDS.check(name, field)


def get_backend(name: str) -> Backend:
    """The backend called ``name`` (a UserError for an unknown name)."""
    return BACKENDS.load(name, "sandbox")()


__all__ = [
    "BACKENDS",
    "Backend",
    "Gateway",
    "GatewaySpec",
    "VerifySpec",
    "backend_names",
    "check_backend",
    "get_backend",
    "register_backend",
]
