"""Shared fixtures: a throwaway project folder, small git repos, and a CLI runner."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
ENV_PREFIXES = ("HARNESS_", "GOAGENTBENCH_")
# The caller's environment as the test session found it, for the rare test that takes
# deliberate configuration from CI (e.g. a repository cache); every test starts without it.
CALLER_ENV = dict(os.environ)
BOT = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@localhost",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@localhost",
    "GIT_AUTHOR_DATE": "2001-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2001-01-01T00:00:00Z",
}


def git(args: list[str], cwd: Path) -> str:
    out = subprocess.run(
        ["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *args],
        cwd=cwd,
        env={**os.environ, **BOT},
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.strip()


def make_repo(root: Path, files: dict[str, str]) -> tuple[Path, str]:
    """A git repo with one commit holding ``files``; returns (path, sha)."""
    root.mkdir(parents=True, exist_ok=True)
    git(["init", "-q"], root)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    git(["add", "-A"], root)
    git(["commit", "-qm", "init"], root)
    return root, git(["rev-parse", "HEAD"], root)


def make_bundle(work: Path, out: Path, files: dict[str, str]) -> str:
    repo, sha = make_repo(work, files)
    git(["bundle", "create", str(out), "--all"], repo)
    shutil.rmtree(repo)
    return sha


# With ``-n 4 --dist loadgroup`` (pytest-xdist) each test goes to whichever worker is
# free. These modules build something expensive once in a module-scoped fixture (a
# reference scored, trials run, a Ray cluster, images): one worker runs each of them
# whole, so the fixture is built once, not once per worker.
WHOLE_MODULES = frozenset(
    {
        "tests/agents/test_agents_live.py",
        "tests/apps/test_apptrust_browser.py",
        "tests/fleet/test_router_service.py",
        "tests/gateway/test_accounting.py",
        "tests/gateway/test_llama_engine.py",
        "tests/images/test_build.py",
        "tests/job/executors/test_ray.py",
        "tests/sandbox/test_docker_network.py",
        "tests/scenario/test_real_repo_scenarios.py",
        "tests/trial/test_no_future.py",
        "tests/trial/test_trial_docker.py",
        "tests/trial/test_trial_viewer.py",
    }
)


# The modules whose executed-app scorings make up most of the machine's app-scoring slot
# (one scoring at a time per machine, harness.appkit.slot): ~1,000 s held in a row,
# the test stage's floor. Spread over the workers, they sat blocked on the
# slot's lock (1,500 s waited across them in one run) while other tests queued. One runs
# them all, first, one after another; the other workers run everything else beside them.
APP_CHAIN = "app-scoring-chain"
CHAIN_MODULES = frozenset(
    {
        "tests/apps/test_meridian_console.py",
        "tests/apps/test_meridian_console_low.py",
        "tests/apps/test_meridian_console_right.py",
        "tests/apps/test_meridian_ledger.py",
        "tests/apps/test_app_scenario.py",
        "tests/apps/test_invoice_sync_redteam.py",
        "tests/apps/test_invoice_sync_redteam4.py",
        "tests/apps/test_invoice_sync_redteam5.py",
        "tests/apps/test_invoice_sync_redteam6.py",
        "tests/apps/test_invoice_sync_variants.py",
        "tests/report/test_board_browser.py",
    }
)


@pytest.hookimpl(tryfirst=True)  # before xdist's own, which reads the group into the id
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        module = item.nodeid.split("::", 1)[0]
        if module in CHAIN_MODULES:
            item.add_marker(pytest.mark.xdist_group(APP_CHAIN))
        elif module in WHOLE_MODULES:
            item.add_marker(pytest.mark.xdist_group(module))
    # the chain is the longest piece of work: handed out first (the same order on every
    # worker, as xdist requires)
    items.sort(key=lambda item: item.nodeid.split("::", 1)[0] not in CHAIN_MODULES)


# measurement channels, not configuration: kept so that every test's process reports there
# (``.ci/run`` sums the app-scoring slot's holds from HARNESS_SLOT_LOG)
KEEP_ENV = frozenset({"HARNESS_SLOT_LOG"})


def clear_harness_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(ENV_PREFIXES) and name not in KEEP_ENV:
            monkeypatch.delenv(name)


#: The verdict's walls (outcome parity with the reference, negative twins) run each hidden
#: target up to four times: on for the tests of the walls and of containment, off for
#: the rest of the suite (trial mechanics, jobs, reports), whose verdicts do not hinge
#: on them. Users get them on (``HARNESS_VERIFY_WALLS`` unset).
WALLS_ENV = "HARNESS_VERIFY_WALLS"
WALLS_MODULES = frozenset(
    {
        "tests/verify/test_walls.py",
        "tests/verify/test_pytwin.py",
        "tests/grader/test_containment_trials.py",
        "tests/trial/test_contain_trials.py",
    }
)


def _walls_for(node: pytest.Item | pytest.Module | None) -> str:
    path = getattr(node, "path", None)
    rel = Path(path).relative_to(REPO_ROOT).as_posix() if path else ""
    return "1" if rel in WALLS_MODULES else "0"


@pytest.fixture(autouse=True, scope="session")
def _isolated_session_env() -> Iterator[None]:
    """Module- and session-scoped fixtures see no caller HARNESS_* variables either."""
    with pytest.MonkeyPatch.context() as mp:
        clear_harness_env(mp)
        mp.setenv(WALLS_ENV, "0")
        yield


@pytest.fixture(autouse=True, scope="module")
def _walls_for_module(request: pytest.FixtureRequest) -> Iterator[None]:
    """A module of ``WALLS_MODULES`` (its module-scoped fixtures too) runs with the walls."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(WALLS_ENV, _walls_for(request.node))
        yield


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    """Every test starts without the caller's HARNESS_* / GOAGENTBENCH_* variables.

    A test that needs one sets it itself (monkeypatch.setenv, or the ``env`` of ``cli``),
    pointing into its own temporary folders.
    """
    clear_harness_env(monkeypatch)
    monkeypatch.setenv(WALLS_ENV, _walls_for(request.node))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project folder with the shipped agents.yml/llms.yml and an empty scenario root."""
    root = tmp_path / "project"
    (root / "scenarios").mkdir(parents=True)
    for name in ("agents.yml", "llms.yml"):
        shutil.copy(REPO_ROOT / name, root / name)
    return root


CLI = Callable[..., subprocess.CompletedProcess[str]]


def run_harness(
    project: Path,
    *args: str,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 600,
) -> subprocess.CompletedProcess[str]:
    """``harness ARGS`` as a subprocess in ``project`` (its scenario root set)."""
    full = {**os.environ, "HARNESS_SCENARIO_ROOT": str(project / "scenarios"), **(env or {})}
    # test agents (agents.yml `adapter: tests.support...`) import from the repository root
    paths = [str(REPO_ROOT), *filter(None, [full.get("PYTHONPATH")])]
    full["PYTHONPATH"] = os.pathsep.join(paths)
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", *args],
        cwd=cwd or project,
        env=full,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture
def cli(project: Path) -> CLI:
    """Run ``harness`` as a subprocess in the project folder."""

    def run(
        *args: str, env: dict[str, str] | None = None, cwd: Path | None = None, timeout: float = 600
    ) -> subprocess.CompletedProcess[str]:
        return run_harness(project, *args, env=env, cwd=cwd, timeout=timeout)

    return run


def write_scenario(
    root: Path, name: str, yaml_text: str, files: dict[str, str] | None = None
) -> Path:
    folder = root / "scenarios" / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "scenario.yml").write_text(yaml_text)
    for rel, text in (files or {}).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    return folder


# Docker fixtures shared by the sandbox test modules (a module may define its own).


@pytest.fixture(scope="module")
def client():  # type: ignore[no-untyped-def]
    """A connected Docker client (fails the test when no engine runs)."""
    from tests._docker import client_or_skip

    return client_or_skip()


@pytest.fixture(scope="module")
def image(client) -> str:  # type: ignore[no-untyped-def]
    """The base image's current tag (built when missing)."""
    from tests._docker import base_tag

    return base_tag(client)


@pytest.fixture
def trial(client) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """A fresh trial id; everything labelled with it is removed afterwards."""
    from harness.sandbox.cleanup import cleanup
    from tests._docker import new_trial

    trial_id = new_trial()
    try:
        yield trial_id
    finally:
        cleanup(trial=trial_id, client=client, all_projects=True)
