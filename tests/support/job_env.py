"""The environment of a ``harness run`` subprocess in a test project: the project's
agents.yml extended with the test's own entrants, and the job's folders under the test's
temporary folder."""

from __future__ import annotations

import os
from pathlib import Path

from tests.conftest import REPO_ROOT


def job_env(project: Path, tmp_path: Path, agents: str, **extra: str) -> dict[str, str]:
    """Append ``agents`` (agents.yml entries) to the project's agents.yml; return the
    environment for its jobs, with ``extra`` variables added."""
    with (project / "agents.yml").open("a") as fh:
        fh.write(agents)
    return {
        **os.environ,
        "PYTHONPATH": str(REPO_ROOT),
        "HARNESS_SCENARIO_ROOT": str(REPO_ROOT / "scenarios"),
        "HARNESS_RESULTS": str(tmp_path / "results"),
        "HARNESS_JOBS": str(tmp_path / "jobs"),
        **extra,
    }
