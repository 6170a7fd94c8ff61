"""Backends by name: ``local`` (the host) and ``docker`` (disposable containers).

``get_backend("docker")`` imports the backend's module only when it is asked for, so a
host-only run never loads the Docker SDK. Add a backend with one line in ``BUILTIN``
(``name: "package.module:Class"``) or, from outside the package, ``register_backend``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from harness.backends.base import Backend, Gateway, GatewaySpec, VerifySpec
from harness.errors import UserError

BUILTIN: dict[str, str] = {
    "docker": "harness.backends.docker:DockerBackend",
    "local": "harness.backends.local:LocalBackend",
}
_REGISTERED: dict[str, Callable[[], Backend]] = {}


def register_backend(name: str, factory: Callable[[], Backend]) -> None:
    """Make ``--sandbox NAME`` run trials on ``factory()``."""
    _REGISTERED[name] = factory


def backend_names() -> list[str]:
    """Every backend name, the default (``docker``) first."""
    return list(dict.fromkeys([*BUILTIN, *_REGISTERED]))


def check_backend(name: str, field: str = "--sandbox") -> str:
    """``name`` when it names a backend; otherwise a UserError listing the choices."""
    if name not in BUILTIN and name not in _REGISTERED:
        raise UserError(
            f"unknown sandbox '{name}'", field=field, fix=f"use {' or '.join(backend_names())}"
        )
    return name


def get_backend(name: str) -> Backend:
    """The backend called ``name`` (a UserError for an unknown name)."""
    check_backend(name, "sandbox")
    if name in _REGISTERED:
        return _REGISTERED[name]()
    module_name, _, attr = BUILTIN[name].partition(":")
    factory: Callable[[], Backend] = getattr(importlib.import_module(module_name), attr)
    return factory()


__all__ = [
    "Backend",
    "Gateway",
    "GatewaySpec",
    "VerifySpec",
    "backend_names",
    "check_backend",
    "get_backend",
    "register_backend",
]
