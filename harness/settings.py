"""Paths and switches taken from the environment (``HARNESS_*`` variables)."""

from __future__ import annotations

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
        from harness.gab import env_value  # HARNESS_X, else goagentbench's GOAGENTBENCH_X

        base = (cwd or Path.cwd()).resolve()
        cache = env_value("REPO_CACHE")
        return cls(
            workspace=Path(env_value("WORKSPACE") or base / "workspace").resolve(),
            results=Path(env_value("RESULTS") or base / "results").resolve(),
            scenario_root=Path(env_value("SCENARIO_ROOT") or base / "scenarios").resolve(),
            repo_cache=Path(cache).resolve() if cache else None,
            skip_remote=_truthy(env_value("SKIP_REMOTE")),
            project_root=base,
        )
