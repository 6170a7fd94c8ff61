"""The runner map: each scenario ``runner`` to the module that runs its targets
(``go`` -> ``verify.go``, ``pytest`` -> ``verify.python``), and ``run_target``, which
gives a target the environment every runner shares."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Protocol

from harness.provision.toolchain import expand
from harness.verify import go, python
from harness.verify.isolation.test_user import TestUser
from harness.verify.outcome import AgentFiles, Kind, TargetResult


class Runner(Protocol):
    def __call__(
        self,
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
    ) -> TargetResult: ...


RUNNERS: dict[str, Runner] = {"go": go.run, "pytest": python.run}

STARTUP_ENV = frozenset(
    {"PYTHONSTARTUP", "PYTHONINSPECT", "PYTHONHOME", "PYTHONUSERBASE", "PYTHONEXECUTABLE"}
    | {"PYTEST_ADDOPTS", "PYTEST_PLUGINS", "GOENV", "LD_PRELOAD"}
)


def run_target(
    runner: str,
    target: str,
    kind: Kind,
    tree: Path,
    *,
    seed: str,
    timeout: float,
    python: str,
    extra_env: dict[str, str] | None = None,
    user: TestUser | None = None,
    canary: bool = False,
    agent_files: AgentFiles = ((), ()),
    twin: bool = True,
) -> TargetResult:
    """Run one target (as ``user`` when given); ``extra_env`` (the scenario's toolchain
    and dependency variables, ``$PATH``/``$PYTHONPATH`` standing for the current values)
    wins over the process's. ``canary``: a pytest target runs a failing canary beside the
    suite, a Go target one in each package it tests, and a report where one passed is
    rejected as forged (``verify.python.canary``, ``verify.go.canary``). ``agent_files``:
    the tree's changed files and the hidden ones; a pytest skip raised from one of the
    agent's is a failure (``verify.python.plugins.charged_skips``). ``twin``: a passing Go
    target is run again against its negative twin (``verify.go.twin``; one of the walls,
    off with them: Python's twins are ``verify.walls``'). A runner other than
    ``go`` runs pytest."""

    env = {k: v for k, v in os.environ.items() if k not in STARTUP_ENV}
    env["HARNESS_SEED"] = seed  # nothing of the controller's own steers the tests
    env.update(expand(extra_env or {}, env))
    run = RUNNERS.get(runner, RUNNERS["pytest"])
    return run(
        target,
        kind,
        tree,
        env,
        timeout,
        python=python,
        user=user,
        canary=canary,
        agent_files=agent_files,
        twin=twin,
    )
