"""The Go runner: ``go test -json``, the shared build cache, the canary in every test
binary and the checks of what a run reported; ``run`` is its entry in the runner map
(``verify.runners``)."""

from __future__ import annotations

from pathlib import Path

from harness.verify.go.run import run_go
from harness.verify.isolation.test_user import TestUser
from harness.verify.outcome import AgentFiles, Kind, TargetResult


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
    """Run one Go target (``run_go``); ``python`` is the pytest runner's, unused here."""
    changed, hidden = agent_files
    return run_go(target, kind, tree, env, timeout, user, canary, hidden, changed, twin=twin)
