"""The pytest runner: the boot script and its plugins (``plugins/``), the canary, the
listings the plugins read, and the checks of what a run reported; ``run`` is its entry in
the runner map (``verify.runners``)."""

from __future__ import annotations

from pathlib import Path

from harness.verify.isolation.test_user import TestUser
from harness.verify.outcome import AgentFiles, Kind, TargetResult
from harness.verify.python.run import run_pytest


def run(
    target: str,
    kind: Kind,
    tree: Path,
    env: dict[str, str],
    timeout: float,
    *,
    python: str,
    user: TestUser | None,
    canary: bool,
    agent_files: AgentFiles,
    twin: bool,
) -> TargetResult:
    """Run one pytest target with ``python`` (``run_pytest``); its twins are
    ``verify.walls``', so ``twin`` is unused here."""
    return run_pytest(target, kind, tree, env, timeout, python, user, canary, agent_files)
