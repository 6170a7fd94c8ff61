"""One registry idiom for every extension kind (backends, agents, executors, ...).

A ``Registry`` is a lazy map of name -> ``"package.module:Attr"``: nothing is imported
until a name is asked for, so a host-only run never loads the Docker SDK or Ray. Plugins
add names in three ways, later ones winning: the built-in map, an installed package's
entry point in the registry's group (``[project.entry-points."harness.backends"]``,
``x = "pkg.mod:Class"``), and ``register(name, obj)`` at run time.

An unknown name is a ``UserError`` listing the choices; a name whose module cannot be
imported names the extra that provides it, e.g. ``executor 'ray' needs the ray extra:
pip install -e '.[ray]'``.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from importlib.metadata import entry_points
from typing import Generic, TypeVar

from harness.errors import UserError

T = TypeVar("T")


def import_spec(spec: str) -> object:
    """The object ``package.module:Attr`` names (ImportError/AttributeError/ValueError)."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"'{spec}' is not package.module:Name")
    obj: object = importlib.import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


class Registry(Generic[T]):
    """Names of one extension kind, each loaded on first use."""

    def __init__(
        self,
        kind: str,
        group: str,
        builtin: Mapping[str, str],
        *,
        extras: Mapping[str, str] | None = None,
        field: str | None = None,
    ) -> None:
        self.kind = kind
        self.group = group
        self.builtin = dict(builtin)
        self.extras = dict(extras or {})
        self.field = field
        self._registered: dict[str, T] = {}
        self._loaded: dict[str, T] = {}
        self._plugins: dict[str, str] | None = None

    def register(self, name: str, obj: T) -> None:
        """Make ``name`` mean ``obj`` (a class or a factory) from now on."""
        self._registered[name] = obj
        self._loaded.pop(name, None)

    def plugins(self) -> dict[str, str]:
        """The names installed packages declare in this registry's entry-point group."""
        if self._plugins is None:
            self._plugins = {ep.name: ep.value for ep in entry_points(group=self.group)}
        return self._plugins

    def spec(self, name: str) -> str | None:
        """The ``module:Attr`` behind ``name`` (None when registered at run time)."""
        return self.plugins().get(name) or self.builtin.get(name)

    def names(self) -> list[str]:
        """Every name: built-ins first (in their order), then plugins, then registered."""
        return list(dict.fromkeys([*self.builtin, *self.plugins(), *self._registered]))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self.names()

    def check(self, name: str, field: str | None = None) -> str:
        """``name`` when it is known; otherwise a UserError listing the choices."""
        if name not in self:
            raise UserError(
                f"unknown {self.kind} '{name}'",
                field=field or self.field,
                fix=f"use one of: {', '.join(self.names())}",
            )
        return name

    def load(self, name: str, field: str | None = None) -> T:
        """The object ``name`` stands for, imported on first use."""
        self.check(name, field)
        if name in self._registered:
            return self._registered[name]
        if name not in self._loaded:
            spec = self.spec(name)
            assert spec is not None
            try:
                obj = import_spec(spec)
            except ImportError as exc:
                raise UserError(self._missing(name, exc), field=field or self.field) from None
            except (AttributeError, ValueError) as exc:
                raise UserError(
                    f"{self.kind} '{name}' points at '{spec}', which cannot be loaded: {exc}",
                    field=field or self.field,
                    fix="write it as package.module:Name",
                ) from None
            self._loaded[name] = obj  # type: ignore[assignment]
        return self._loaded[name]

    def _missing(self, name: str, exc: ImportError) -> str:
        extra = self.extras.get(name)
        if extra:
            return (
                f"{self.kind} '{name}' needs the {extra} extra: pip install -e '.[{extra}]' ({exc})"
            )
        return f"{self.kind} '{name}' cannot be imported: {exc}"


class LazyMap(Mapping[str, T]):
    """A read-only ``name -> object`` view of a registry's built-ins, imported per key."""

    def __init__(self, registry: Registry[T]) -> None:
        self._registry = registry

    def __getitem__(self, name: str) -> T:
        if name not in self._registry.builtin:
            raise KeyError(name)
        return self._registry.load(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self._registry.builtin)

    def __len__(self) -> int:
        return len(self._registry.builtin)


__all__ = ["LazyMap", "Registry", "import_spec"]
