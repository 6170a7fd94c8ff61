"""The built-in agents: oracle applies the reference solution, nop changes nothing
(agents/builtin.py)."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from harness.agents.base import AgentContext
from harness.agents.builtin import BUILTIN_VERSION, NopAgent, OracleAgent, reference_solution
from harness.errors import UserError
from harness.sandbox.base import ExecResult
from harness.scenario.load import load_scenario
from harness.scenario.model import LoadedScenario
from tests.conftest import REPO_ROOT, git

pytestmark = pytest.mark.integration  # real git

SMOKE = "smoke/py-fast"


def smoke() -> LoadedScenario:
    return load_scenario(SMOKE, REPO_ROOT / "scenarios")


def workspace(tmp_path: Path, loaded: LoadedScenario) -> Path:
    ws = tmp_path / "ws"
    git(["clone", "-q", str(loaded.directory / "repo.bundle"), str(ws)], tmp_path)
    git(["checkout", "-q", loaded.scenario.commit], ws)
    return ws


def context(loaded: LoadedScenario, ws: Path, out: Path, sandbox: object = None) -> AgentContext:
    fields: dict[str, Any] = {
        "scenario": loaded, "workspace": ws, "sandbox": sandbox, "out_dir": out,
    }  # fmt: skip
    return cast(AgentContext, SimpleNamespace(**fields))


def test_the_oracle_applies_the_patch_on_the_host(tmp_path: Path) -> None:
    loaded = smoke()
    ws = workspace(tmp_path, loaded)
    agent = OracleAgent()
    assert agent.version() == BUILTIN_VERSION and agent.image("python") is None
    assert agent.needs_sandbox is False
    done = agent.run(context(loaded, ws, tmp_path))
    assert done.exit == "completed" and done.detail == "applied solution.patch"
    assert (tmp_path / "transcript.txt").read_text() == "oracle: applied solution.patch\n"
    assert "calc" in git(["status", "--porcelain"], ws)


def test_the_oracle_copies_a_solution_folder(tmp_path: Path) -> None:
    loaded = smoke()
    folder = tmp_path / "scenario"
    shutil.copytree(loaded.directory, folder)
    (folder / "fixed" / "calc").mkdir(parents=True)
    (folder / "fixed" / "calc" / "__init__.py").write_text("FIXED = True\n")
    moved = dataclasses.replace(
        loaded,
        directory=folder,
        scenario=loaded.scenario.model_copy(update={"solution": "fixed"}),
    )
    ws = workspace(tmp_path, moved)
    assert OracleAgent.apply(moved, ws) == "copied 1 files from fixed/"
    assert (ws / "calc" / "__init__.py").read_text() == "FIXED = True\n"


def test_no_reference_solution_is_the_users_to_add(tmp_path: Path) -> None:
    loaded = smoke()
    bare = dataclasses.replace(
        loaded, scenario=loaded.scenario.model_copy(update={"solution": None})
    )
    with pytest.raises(UserError) as caught:
        reference_solution(bare, "use --agent oracle")
    said = str(caught.value)
    assert "no reference solution" in said and "to use --agent oracle" in said
    assert reference_solution(loaded, "x") == loaded.directory / "solution.patch"


def test_the_oracle_refuses_a_patch_that_does_not_apply(tmp_path: Path) -> None:
    loaded = smoke()
    ws = workspace(tmp_path, loaded)
    OracleAgent.apply(loaded, ws)
    with pytest.raises(UserError):
        OracleAgent.apply(loaded, ws)  # applied already: it no longer applies


def test_nop_looks_and_changes_nothing(tmp_path: Path) -> None:
    loaded = smoke()
    ws = workspace(tmp_path, loaded)
    seen: list[list[str]] = []

    def run(cmd: list[str], timeout: float) -> ExecResult:
        seen.append(cmd)
        return ExecResult(returncode=0, stdout="/ws\ncalc\n", stderr="", duration_s=0.1)

    agent = NopAgent()
    assert agent.version() == BUILTIN_VERSION and agent.image("go") is None
    done = agent.run(context(loaded, ws, tmp_path, SimpleNamespace(exec=run)))
    assert done.exit == "completed" and done.detail == "changed nothing"
    assert seen and seen[0][0] == "sh"
    transcript = (tmp_path / "transcript.txt").read_text()
    assert transcript == "nop: looked at the workspace and changed nothing\n/ws\ncalc\n"
    assert git(["status", "--porcelain"], ws) == ""
