"""Setting up a workspace: clone, checkout, copy, patch, exec, spec, baseline commit.

Setup happens in a temporary folder beside the target and is renamed into place only
when every step succeeded, so a failed step never leaves a workspace claiming to be ready.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from harness import __version__
from harness.config.settings import Settings
from harness.errors import UserError
from harness.scenario.model import LoadedScenario
from harness.scenario.repo import clone, seal
from harness.trial import seed as trialseed
from harness.util import trialgit
from harness.util.agentfiles import real_path
from harness.util.deeptree import remove_tree
from harness.util.fs import (
    copy_destinations,
    copy_pairs,
    make_dirs,
    read_json,
    remove_empty_dirs,
    sha256_file,
    write_json,
)
from harness.util.git import apply_patch, commit_all

STATE = Path(".git") / "harness" / "state.json"
SETUP_EXEC_TIMEOUT = 900


@dataclass(frozen=True)
class WorkspaceState:
    """What setup made: recorded inside ``.git`` so the agent's diff never shows it.

    The agent can read this file, so ``seed`` is only the scenario's *public* seed; the
    trial's secret seed is held outside the workspace by ``harness.trial.seed``.
    """

    scenario: str
    scenario_sha: str
    seed: str
    commit: str
    baseline: str
    spec_sha256: str | None
    harness_version: str
    created_at: str
    contaminated: bool = False


def workspace_path(loaded: LoadedScenario, settings: Settings) -> Path:
    return settings.workspace / loaded.name


def read_state(workspace: Path, loaded: LoadedScenario) -> WorkspaceState:
    """The state of a ready workspace, or a UserError telling the user to run setup.

    Harness's own copy (beside the workspace, out of the agent's reach) is the one
    trusted; the copy in the workspace's ``.git`` is only read for workspaces that have
    none (made by hand or by an older harness)."""
    trusted = trialgit.private_dir(workspace) / "state.json"
    path = trusted if trusted.is_file() and workspace.is_dir() else workspace / STATE
    if not path.is_file():
        raise UserError(
            "workspace is not set up",
            file=workspace,
            field="(workspace)",
            fix=f"run `harness setup {loaded.name}`",
        )
    state = WorkspaceState(**read_json(path))
    if state.contaminated:
        raise UserError(
            "workspace holds hidden verification files (verify --copy-only)",
            file=workspace,
            field="(workspace)",
            fix=f"run `harness setup {loaded.name}` again",
        )
    return state


def write_state(workspace: Path, state: WorkspaceState) -> None:
    """Record the state in the workspace (for the agent) and in harness's own folder."""
    if real_path(workspace, str(STATE)):  # never through a link the agent left
        write_json(workspace / STATE, asdict(state))
    if trialgit.private_dir(workspace).is_dir():
        write_json(trialgit.private_dir(workspace) / "state.json", asdict(state))


def _run_exec(cmd: str, cwd: Path, seed: str, loaded: LoadedScenario, index: int) -> None:
    env = {**os.environ, "HARNESS_SEED": seed, "HARNESS_SCENARIO_DIR": str(loaded.directory)}
    try:
        result = subprocess.run(
            ["sh", "-c", cmd],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=SETUP_EXEC_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise UserError(
            f"setup command timed out after {SETUP_EXEC_TIMEOUT}s: {cmd!r}",
            file=loaded.path,
            field=f"setup.exec[{index}]",
            fix="make the command finish",
        ) from None
    if result.returncode != 0:
        tail = (result.stderr or result.stdout).strip().splitlines()[-1:] or ["no output"]
        raise UserError(
            f"setup command {cmd!r} exited {result.returncode}: {tail[0]}",
            file=loaded.path,
            field=f"setup.exec[{index}]",
            fix="fix the command (it runs with sh -c in the workspace root)",
        )


def _apply_steps(loaded: LoadedScenario, tree: Path, seed: str) -> str | None:
    steps = loaded.scenario.setup_steps
    for i, step in enumerate(steps.copy_):
        src = loaded.file(step.from_, f"setup.copy[{i}].from")
        pairs = copy_destinations(src, step.to, tree)
        clash = next((d for _, d in pairs if d.exists()), None)
        if clash is not None:
            raise UserError(
                f"copy would overwrite {clash.relative_to(tree)}",
                file=loaded.path,
                field=f"setup.copy[{i}].to",
                fix="copy to a path that does not exist yet",
            )
        copy_pairs(pairs)
    for i, patch in enumerate(steps.patch):
        patch_file = loaded.file(patch, f"setup.patch[{i}]")
        apply_patch(
            patch_file,
            tree,
            "patch",
            file=loaded.path,
            field=f"setup.patch[{i}]",
            fix=f"regenerate {patch} against commit {loaded.scenario.commit}",
        )
    for i, cmd in enumerate(steps.exec):
        _run_exec(cmd, tree, seed, loaded, i)
    if loaded.scenario.spec:
        spec = loaded.file(loaded.scenario.spec, "spec")
        shutil.copy2(spec, tree / spec.name)
        return sha256_file(spec)
    return None


def setup(loaded: LoadedScenario, settings: Settings, seed: str | None = None) -> Path:
    """Create a fresh, ready workspace for ``loaded``; replace any previous one.

    ``seed`` is the trial's secret seed (a fresh one when None); setup steps (trusted
    scenario code) see it as HARNESS_SEED, the workspace never records it.
    """

    seed = seed or trialseed.new_seed()
    target = workspace_path(loaded, settings)
    created = make_dirs(target.parent)  # removed again if setup fails: no empty folders
    staging = Path(tempfile.mkdtemp(prefix=f".setup-{target.name}-", dir=target.parent))
    ready = False
    try:
        tree = staging / "tree"
        clone(loaded, tree, settings.repo_cache, allow_remote=not settings.skip_remote)
        spec_sha = _apply_steps(loaded, tree, seed)
        baseline = commit_all(tree, "harness: baseline after setup")
        seal(tree)  # no history after the scenario's commit, no leftovers of setup
        write_state(
            tree,
            WorkspaceState(
                scenario=loaded.name,
                scenario_sha=loaded.sha256,
                seed=loaded.seed,  # public; the secret one is kept by trialseed
                commit=loaded.scenario.commit,
                baseline=baseline,
                spec_sha256=spec_sha,
                harness_version=__version__,
                created_at=datetime.now(UTC).isoformat(),
            ),
        )
        if target.exists():
            remove_tree(target)  # an earlier trial's workspace, at any depth
        tree.rename(target)
        # harness's own git dir and state, copied before any agent saw the workspace
        trialgit.make_private(target, target / ".git")
        write_state(target, read_state(target, loaded))
        ready = True
        trialseed.store(settings.workspace, loaded.name, seed, baseline)
    finally:
        remove_tree(staging)
        if not ready:
            remove_tree(trialgit.private_dir(target))
            remove_empty_dirs(created)
    return target
