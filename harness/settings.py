"""Every setting harness takes from the environment, typed, with one default each.

This module is the one place that reads ``HARNESS_*`` variables (and goagentbench's
``GOAGENTBENCH_*`` names, accepted as aliases: ``HARNESS_WORKSPACE`` wins over
``GOAGENTBENCH_WORKSPACE`` when both are set). An empty value counts as unset.
``Settings`` is a pydantic model, so a remote worker can receive it as JSON
(``settings.model_dump(mode="json")`` / ``Settings.model_validate(data)``).

Paths that are not set default to the project root, the folder holding ``agents.yml``
found from ``HARNESS_HOME`` or by walking up from the current folder (see
:mod:`harness.project`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

PREFIXES = ("HARNESS_", "GOAGENTBENCH_")
FALSY = {"", "0", "false", "no", "off"}
CA_VARIABLES = ("SSL_CERT_FILE", "PIP_CERT", "REQUESTS_CA_BUNDLE")
SYSTEM_CA = Path("/etc/ssl/certs/ca-certificates.crt")
PACKAGE_IMAGES = Path(__file__).resolve().parents[1] / "images"

# name (after the prefix) -> what it sets and its default; the README's paths table
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


class Settings(BaseModel):
    """Where harness reads and writes, and its switches; derived paths filled in."""

    model_config = ConfigDict(frozen=True)

    project_root: Path
    project_found: bool = True
    workspace: Path
    results: Path
    scenario_root: Path
    jobs: Path
    repo_cache: Path | None = None
    skip_remote: bool = False
    fleet: Path
    cache_dir: Path
    images_dir: Path = PACKAGE_IMAGES
    base_route: str = ""

    @model_validator(mode="before")
    @classmethod
    def _defaults(cls, data: Any) -> Any:
        """The one default of each derived path (so every caller agrees)."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        root = Path(data["project_root"])
        data.setdefault("workspace", root / "workspace")
        data.setdefault("results", root / "results")
        data.setdefault("scenario_root", root / "scenarios")
        if data.get("jobs") is None:
            data["jobs"] = Path(data["results"]) / "jobs"
        if data.get("fleet") is None:
            data["fleet"] = root / "fleet.yml"
        if data.get("cache_dir") is None:
            data["cache_dir"] = Path.home() / ".cache" / "harness"
        if data.get("images_dir") is None:
            data["images_dir"] = PACKAGE_IMAGES
        return data

    @classmethod
    def from_env(
        cls, cwd: Path | None = None, environ: Mapping[str, str] | None = None
    ) -> Settings:
        """Settings from the environment (``environ``, default the process's)."""
        from harness.project import find_project

        found = find_project(cwd or Path.cwd(), env_value("HOME", environ))
        root = found.root or found.start

        def path(key: str) -> Path | None:
            value = env_value(key, environ)
            return Path(value).expanduser().resolve() if value else None

        fields: dict[str, Any] = {
            "project_root": root,
            "project_found": found.root is not None,
            "repo_cache": path("REPO_CACHE"),
            "skip_remote": env_flag("SKIP_REMOTE", environ),
            "base_route": env_value("BASE_ROUTE", environ) or "",
        }
        for key, name in (
            ("WORKSPACE", "workspace"),
            ("RESULTS", "results"),
            ("SCENARIO_ROOT", "scenario_root"),
            ("JOBS", "jobs"),
            ("FLEET", "fleet"),
            ("CACHE_DIR", "cache_dir"),
            ("IMAGES_DIR", "images_dir"),
        ):
            value = path(key)
            if value is not None:
                fields[name] = value
        return cls.model_validate(fields)
