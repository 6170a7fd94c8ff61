"""Turn the author's set-up workspace into a scenario's solution or one of its defects.

The change is measured in a scratch clone of the workspace (so nothing is written into
the workspace's own object store), against the baseline (solution) or against baseline +
solution (defect). Hidden files copied in by ``verify --copy-only`` are left out.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from harness.agents.builtin import OracleAgent
from harness.backends import VerifySpec, get_backend
from harness.config.settings import Settings
from harness.errors import InfraError, UserError
from harness.scenario.model import LoadedScenario
from harness.scoring import Score
from harness.scoring.verdicts import broken_checks
from harness.trial.workspace import STATE, read_state, setup, workspace_path
from harness.util.fs import copy_destinations, copytree, read_json
from harness.util.git import apply_patch, commit_all, git
from harness.verify.proof import thresholds_for
from harness.verify.request import make_request

DEFECT_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")


@dataclass(frozen=True)
class Saved:
    path: Path
    files: list[str]
    breaks: list[str]


def _baseline(loaded: LoadedScenario, ws: Path) -> str:
    state = ws / STATE
    if not state.is_file():
        raise UserError(
            "workspace is not set up",
            file=ws,
            field="(workspace)",
            fix=f"run `harness setup {loaded.name}`, make the change, then save it",
        )
    return str(read_json(state)["baseline"])


def _hidden_paths(loaded: LoadedScenario, ws: Path) -> list[str]:
    """Where ``verify --copy-only`` would have put hidden files (never part of a change)."""
    out = []
    for step in loaded.scenario.verify.copy_:
        src = loaded.directory / step.from_
        if src.exists():
            out += [
                d.relative_to(ws.resolve()).as_posix()
                for _, d in copy_destinations(src, step.to, ws)
            ]
    return out


def _scratch(ws: Path, baseline: str, tmp: Path) -> Path:
    repo = tmp / "scratch"
    git(["clone", "-q", "--no-checkout", str(ws), str(repo)])
    git(["checkout", "-q", "--detach", baseline], repo)
    return repo


def _diff_workspace(scratch: Path, base: str, ws: Path, exclude: list[str]) -> str:
    """``git diff`` from commit ``base`` (in ``scratch``) to the workspace's files."""
    index = scratch.parent / "index"
    env = {"GIT_INDEX_FILE": str(index)}
    gitdir = ["--git-dir", str(scratch / ".git"), "--work-tree", str(ws)]
    git([*gitdir, "read-tree", base], ws, env=env)
    git([*gitdir, "add", "-A"], ws, env=env)
    specs = [".", *(f":(exclude,literal){p}" for p in exclude)]
    return git([*gitdir, "diff", "--cached", "--binary", base, "--", *specs], ws, env=env).stdout


def _files(patch: str) -> list[str]:
    return [ln.split(" b/", 1)[1] for ln in patch.splitlines() if ln.startswith("diff --git ")]


def _set_solution_key(loaded: LoadedScenario, rel: str) -> None:
    """Add ``solution: <rel>`` to scenario.yml (text append keeps the author's layout)."""
    text = loaded.path.read_text(encoding="utf-8")
    loaded.path.write_text(text.rstrip("\n") + f"\nsolution: {rel}\n", encoding="utf-8")


def save_solution(loaded: LoadedScenario, settings: Settings) -> Saved:
    """Write the workspace's change since the baseline as the scenario's solution.patch."""
    ws = workspace_path(loaded, settings)
    baseline = _baseline(loaded, ws)
    declared = loaded.scenario.solution
    if declared and (loaded.directory / declared).is_dir():
        raise UserError(
            "the solution is a folder of files",
            file=loaded.path,
            field="solution",
            fix="update that folder by hand, or set solution: solution.patch to save a patch",
        )
    with tempfile.TemporaryDirectory(prefix="harness-save-") as tmp:
        scratch = _scratch(ws, baseline, Path(tmp))
        patch = _diff_workspace(scratch, baseline, ws, _hidden_paths(loaded, ws))
    if not patch.strip():
        raise UserError(
            "the workspace has no change since setup",
            file=ws,
            field="(workspace)",
            fix="edit the workspace into the reference solution, then save it",
        )
    rel = declared or "solution.patch"
    target = loaded.directory / rel
    target.write_text(patch, encoding="utf-8")
    if not declared:
        _set_solution_key(loaded, rel)
    return Saved(target, _files(patch), [])


def apply_solution(loaded: LoadedScenario, settings: Settings) -> str:
    """Apply the reference solution to the set-up workspace (to break it into a defect)."""

    ws = workspace_path(loaded, settings)
    _baseline(loaded, ws)
    return OracleAgent.apply(loaded, ws)


def _defect_patch(loaded: LoadedScenario, ws: Path, baseline: str) -> str:
    with tempfile.TemporaryDirectory(prefix="harness-save-") as tmp:
        scratch = _scratch(ws, baseline, Path(tmp))
        OracleAgent.apply(loaded, scratch)
        reference = commit_all(scratch, "reference solution")
        return _diff_workspace(scratch, reference, ws, _hidden_paths(loaded, ws))


def _score(loaded: LoadedScenario, ws: Path, sandbox: str) -> Any:
    """Score ``ws`` as verification would (host or scorer container)."""

    state = read_state(ws, loaded)
    request = make_request(loaded, ws, state.baseline, loaded.seed)  # setup used it too
    spec = VerifySpec(loaded, ws, request, labels={"harness.phase": "control"})
    outcome, _ = get_backend(sandbox).verify(spec)
    if outcome.error or outcome.score is None:
        raise InfraError(f"scoring failed: {outcome.error or 'no score'}")
    return Score.model_validate(outcome.score)


def breaks_by_scoring(
    loaded: LoadedScenario, settings: Settings, patch: Path, sandbox: str
) -> list[str]:
    """The checks ``patch`` breaks on the reference tree (root checks only: what it breaks
    downstream of them is excused by the controls anyway)."""

    with tempfile.TemporaryDirectory(prefix="harness-breaks-") as tmp:
        scratch = dataclasses.replace(settings, workspace=Path(tmp) / "ws")
        reference = setup(loaded, scratch)
        OracleAgent.apply(loaded, reference)
        ref_score = _score(loaded, reference, sandbox)
        tree = Path(tmp) / "defect"
        copytree(reference, tree)
        apply_patch(
            patch,
            tree,
            "defect (on the reference)",
            file=patch,
            field="(patch)",
            fix="make the defect on a workspace holding the reference solution",
        )
        broken = broken_checks(
            ref_score, _score(loaded, tree, sandbox), thresholds_for(loaded).epsilon
        )
    roots = {r.check: r.root for r in ref_score.rows}
    return [name for name in broken if roots.get(name) not in broken]


def save_defect(
    loaded: LoadedScenario,
    settings: Settings,
    name: str,
    *,
    breaks: list[str] | None,
    harm: str,
    sandbox: str = "docker",
) -> Saved:
    """Write the workspace's change on top of the solution as defects/NAME.patch + .yml;
    ``breaks=None`` fills the broken checks in from a scoring run."""
    if not DEFECT_NAME.match(name):
        raise UserError(
            f"'{name}' is not a defect name",
            field="NAME",
            fix="use lower-case letters, digits and dashes, e.g. off-by-one",
        )
    if not harm.strip():
        raise UserError(
            "a defect needs the harm it stands for",
            field="--harm",
            fix='say what a user suffers, e.g. --harm "totals are off by a cent"',
        )
    ws = workspace_path(loaded, settings)
    baseline = _baseline(loaded, ws)
    if not loaded.scenario.solution:
        raise UserError(
            "defects are made on the reference solution, and there is none yet",
            file=loaded.path,
            field="solution",
            fix=f"run `harness solution save {loaded.name}` first",
        )
    patch = _defect_patch(loaded, ws, baseline)
    if not patch.strip():
        raise UserError(
            "the workspace does not differ from the reference solution",
            file=ws,
            field="(workspace)",
            fix=f"run `harness solution apply {loaded.name}`, break it, then save the defect",
        )
    folder = loaded.directory / "defects"
    with tempfile.TemporaryDirectory(prefix="harness-defect-") as tmp:
        staged = Path(tmp) / f"{name}.patch"
        staged.write_text(patch, encoding="utf-8")
        found = (
            breaks if breaks is not None else breaks_by_scoring(loaded, settings, staged, sandbox)
        )
        if not found:
            raise UserError(
                "the defect breaks no check",
                file=ws,
                field="--breaks",
                fix="make the change break what the hidden tests check, or name --breaks",
            )
        folder.mkdir(exist_ok=True)
        shutil.copy2(staged, folder / f"{name}.patch")
    meta = {"breaks": found, "harm": harm.strip()}
    (folder / f"{name}.yml").write_text(yaml.safe_dump(meta, sort_keys=False), encoding="utf-8")
    return Saved(folder / f"{name}.patch", _files(patch), found)
