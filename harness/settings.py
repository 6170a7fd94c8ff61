"""Paths and switches taken from the environment (``HARNESS_*`` variables)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in {"1", "true", "yes", "on"}


@dataclass(frozen=True)
class Settings:
    workspace: Path
    results: Path
    scenario_root: Path
    repo_cache: Path | None
    skip_remote: bool
    project_root: Path

    @classmethod
    def from_env(cls, cwd: Path | None = None) -> Settings:
        base = (cwd or Path.cwd()).resolve()
        cache = os.environ.get("HARNESS_REPO_CACHE")
        return cls(
            workspace=Path(os.environ.get("HARNESS_WORKSPACE", base / "workspace")).resolve(),
            results=Path(os.environ.get("HARNESS_RESULTS", base / "results")).resolve(),
            scenario_root=Path(
                os.environ.get("HARNESS_SCENARIO_ROOT", base / "scenarios")
            ).resolve(),
            repo_cache=Path(cache).resolve() if cache else None,
            skip_remote=_truthy(os.environ.get("HARNESS_SKIP_REMOTE")),
            project_root=base,
        )
