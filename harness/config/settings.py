"""Every setting harness takes from the environment, typed, with one default each.

This module is the one place that reads ``HARNESS_*`` variables (and goagentbench's
``GOAGENTBENCH_*`` names, accepted as aliases: ``HARNESS_WORKSPACE`` wins over
``GOAGENTBENCH_WORKSPACE`` when both are set). An empty value counts as unset.
``Settings`` is a pydantic dataclass, so a remote worker can receive it as JSON
(``settings.as_json()`` / ``Settings.from_json(data)``).

Paths that are not set default to the project root, the folder holding ``agents.yml``
found from ``HARNESS_HOME`` or by walking up from the current folder (see
:mod:`harness.config.root`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter
from pydantic.dataclasses import dataclass

from harness.config.root import find_project

PREFIXES = ("HARNESS_", "GOAGENTBENCH_")
FALSY = {"", "0", "false", "no", "off"}
CA_VARIABLES = ("SSL_CERT_FILE", "PIP_CERT", "REQUESTS_CA_BUNDLE")
SYSTEM_CA = Path("/etc/ssl/certs/ca-certificates.crt")
PACKAGE_IMAGES = Path(__file__).resolve().parents[2] / "images"

# name (after the prefix) -> what it sets and its default; docs/CONFIGURATION.md's paths table
VARIABLES: dict[str, str] = {
    "HOME": "project root (agents.yml, llms.yml, scenarios/); default: walk up from the cwd",
    "WORKSPACE": "workspaces; default <project>/workspace",
    "RESULTS": "result folders; default <project>/results",
    "SCENARIO_ROOT": "scenarios; default <project>/scenarios",
    "JOBS": "job ledgers of `harness run`; default <results>/jobs",
    "FLEET": "fleet file; default <project>/fleet.yml",
    "REPO_CACHE": "offline repository mirrors (<host>/<org>/<name>.git); default none",
    "SKIP_REMOTE": "1: never clone or check commits over the network; default off",
    "CACHE_DIR": "locks and remembered answers; default ~/.cache/harness",
    "IMAGES_DIR": "image definitions (Dockerfiles); default the package's images/",
    "BASE_ROUTE": "'bootstrap': build the base image with debootstrap, never pull",
}


def read_env(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    """One variable of the process environment (or ``environ``); empty counts as unset."""
    value = (os.environ if environ is None else environ).get(name)
    return value if value else None


def env_value(key: str, environ: Mapping[str, str] | None = None) -> str | None:
    """``HARNESS_<key>``, else its alias ``GOAGENTBENCH_<key>``, else None.

    ``key`` may be given with or without the ``HARNESS_`` prefix.
    """
    bare = key.removeprefix(PREFIXES[0])
    for prefix in PREFIXES:
        value = read_env(prefix + bare, environ)
        if value is not None:
            return value
    return None


def env_flag(key: str, environ: Mapping[str, str] | None = None) -> bool:
    """A switch: set to anything but 0/false/no/off means on (goagentbench: non-empty)."""
    return (env_value(key, environ) or "").strip().lower() not in FALSY


def ca_bundle(environ: Mapping[str, str] | None = None) -> Path | None:
    """First existing CA bundle of $SSL_CERT_FILE, $PIP_CERT, $REQUESTS_CA_BUNDLE, system."""
    for value in [*(read_env(k, environ) for k in CA_VARIABLES), str(SYSTEM_CA)]:
        if value and Path(value).is_file():
            return Path(value)
    return None


@dataclass(frozen=True, kw_only=True)
class Settings:
    """Where harness reads and writes, and its switches.

    A (pydantic) dataclass: ``dataclasses.replace(settings, workspace=...)`` works and
    validates; ``as_json()`` / ``from_json()`` carry it to a worker process or machine.
    Optional paths left at None take their default from the others (``jobs_dir`` follows
    ``results``), so a replaced ``results`` moves the jobs with it.
    """

    project_root: Path
    workspace: Path
    results: Path
    scenario_root: Path
    repo_cache: Path | None = None
    skip_remote: bool = False
    project_found: bool = True
    jobs: Path | None = None
    fleet: Path | None = None
    cache_dir: Path | None = None
    images_dir: Path | None = None
    base_route: str = ""

    @property
    def jobs_dir(self) -> Path:
        """``HARNESS_JOBS``, else ``<results>/jobs``: beside the results the jobs describe."""
        return self.jobs or self.results / "jobs"

    @property
    def fleet_file(self) -> Path:
        """``HARNESS_FLEET``, else ``<project>/fleet.yml`` (the one default)."""
        return self.fleet or self.project_root / "fleet.yml"

    @property
    def cache_root(self) -> Path:
        """``HARNESS_CACHE_DIR``, else ``~/.cache/harness``."""
        return self.cache_dir or Path.home() / ".cache" / "harness"

    @property
    def images_root(self) -> Path:
        """``HARNESS_IMAGES_DIR``, else the package's ``images/``."""
        return self.images_dir or PACKAGE_IMAGES

    def as_json(self) -> dict[str, Any]:
        return dict(_ADAPTER.dump_python(self, mode="json"))

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Settings:
        return _ADAPTER.validate_python(dict(data))

    @classmethod
    def from_env(
        cls, cwd: Path | None = None, environ: Mapping[str, str] | None = None
    ) -> Settings:
        """Settings from the environment (``environ``, default the process's)."""
        found = find_project(cwd or Path.cwd(), env_value("HOME", environ))
        root = found.root or found.start

        def path(key: str) -> Path | None:
            value = env_value(key, environ)
            return Path(value).expanduser().resolve() if value else None

        return cls(
            project_root=root,
            project_found=found.root is not None,
            workspace=path("WORKSPACE") or root / "workspace",
            results=path("RESULTS") or root / "results",
            scenario_root=path("SCENARIO_ROOT") or root / "scenarios",
            repo_cache=path("REPO_CACHE"),
            skip_remote=env_flag("SKIP_REMOTE", environ),
            jobs=path("JOBS"),
            fleet=path("FLEET"),
            cache_dir=path("CACHE_DIR"),
            images_dir=path("IMAGES_DIR"),
            base_route=env_value("BASE_ROUTE", environ) or "",
        )


_ADAPTER: TypeAdapter[Settings] = TypeAdapter(Settings)


def cache_dir() -> Path:
    """``$HARNESS_CACHE_DIR`` or ``~/.cache/harness``; holds locks and remembered answers."""
    path = Settings.from_env().cache_root
    path.mkdir(parents=True, exist_ok=True)
    return path
