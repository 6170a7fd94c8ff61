"""Preflight, once, before anything is written: a wrong DOCKER_HOST (named), an agent CLI
missing where ``--sandbox local`` runs it (the machine's fault with its install line, never
the agent's ``failed``), a results root without room, a repository neither cached nor
reachable, a replay model without a cassette (the user's mistake, exit 2). Each is one line
on stderr, exit 2 or 3, and no workspace, run folder or job folder is left."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, run_harness

pytestmark = pytest.mark.integration

CASSETTE = str(REPO_ROOT / "tests" / "cassettes" / "mini-py-fast-solve.jsonl")
EXEC = ["exec", "smoke/py-fast", "--agent", "nop"]
RUN = ["run", "--agents", "nop", "--scenarios", "smoke/py-fast"]


@pytest.fixture
def env(project: Path, tmp_path: Path) -> dict[str, str]:
    shutil.copytree(REPO_ROOT / "scenarios/smoke/py-fast", project / "scenarios/smoke/py-fast")
    return {
        "HARNESS_RESULTS": str(tmp_path / "out" / "results"),
        "HARNESS_JOBS": str(tmp_path / "out" / "jobs"),
        "HARNESS_WORKSPACE": str(tmp_path / "out" / "ws"),
    }


def _refused(done: subprocess.CompletedProcess[str], code: int, tmp_path: Path) -> str:
    assert done.returncode == code, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert not (tmp_path / "out").exists()  # no workspace, no run folder, no job
    return lines[0]


@pytest.mark.parametrize("args", [EXEC, RUN], ids=["exec", "run"])
def test_a_wrong_docker_host_is_named_before_anything_runs(
    args: list[str], project: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    sock = f"unix://{tmp_path}/no-engine.sock"
    done = run_harness(project, *args, "--sandbox", "docker", env={**env, "DOCKER_HOST": sock})
    line = _refused(done, 3, tmp_path)
    assert f"DOCKER_HOST={sock}" in line and "Docker engine not reachable" in line


@pytest.mark.parametrize("args", [EXEC, RUN], ids=["exec", "run"])
def test_a_missing_local_agent_program_is_the_machines_fault(
    args: list[str], project: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    agent = ["--agent" if args is EXEC else "--agents", "mini-swe-agent"]
    model = ["--model" if args is EXEC else "--models", "replay", "--replay", CASSETTE]
    base = [a for a in args if a not in ("nop", "--agent", "--agents")]
    bare = tmp_path / "bin"  # a PATH with git and python only: no `mini`
    bare.mkdir()
    for tool in ("git", "python3"):
        found = shutil.which(tool)
        assert found
        (bare / tool).symlink_to(found)
    path_env = {**env, "PATH": str(bare)}
    done = run_harness(project, *base, *agent, *model, "--sandbox", "local", env=path_env)
    line = _refused(done, 3, tmp_path)
    assert "agent program not found: `mini`" in line
    assert "pip install 'mini-swe-agent==2.4.6'" in line


@pytest.mark.parametrize("args", [EXEC, RUN], ids=["exec", "run"])
def test_a_results_root_without_room_is_refused(
    args: list[str], project: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    done = run_harness(
        project, *args, "--sandbox", "local", env={**env, "HARNESS_MIN_FREE_MB": "1e15"}
    )
    line = _refused(done, 3, tmp_path)
    assert "the results root has" in line and "MiB free" in line


@pytest.fixture
def remote(project: Path) -> None:
    yml = project / "scenarios/smoke/py-fast/scenario.yml"
    text = yml.read_text().replace("repo: repo.bundle", "repo: https://git.example.invalid/o/n.git")
    yml.write_text(text)


@pytest.mark.parametrize("args", [EXEC, RUN], ids=["exec", "run"])
def test_a_repository_neither_cached_nor_reachable_is_named(
    args: list[str], project: Path, tmp_path: Path, env: dict[str, str], remote: None
) -> None:
    done = run_harness(project, *args, "--sandbox", "local", env=env)
    line = _refused(done, 3, tmp_path)
    assert "git.example.invalid/o/n.git cannot be cloned" in line
    assert "HARNESS_REPO_CACHE" in line
    off = run_harness(project, *args, "--sandbox", "local", env={**env, "HARNESS_SKIP_REMOTE": "1"})
    assert "not cached; HARNESS_SKIP_REMOTE" in _refused(off, 2, tmp_path)


def test_doctor_lists_the_repositories_that_cannot_clone(
    project: Path, tmp_path: Path, env: dict[str, str], remote: None
) -> None:
    done = run_harness(project, "doctor", env=env)
    lines = done.stdout.splitlines()
    assert any(ln.startswith("MISS repositories") and "1 of 1" in ln for ln in lines), done.stdout
    miss = [ln for ln in lines if ln.startswith("MISS repo smoke/py-fast")]
    assert miss and "git.example.invalid" in miss[0]
    assert "scenarios/README.md" in done.stdout


@pytest.mark.parametrize("args", [EXEC, RUN], ids=["exec", "run"])
def test_a_replay_model_without_a_cassette_is_the_users_mistake(
    args: list[str], project: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    agent = ["--agent" if args is EXEC else "--agents", "mini-swe-agent"]
    model = ["--model" if args is EXEC else "--models", "replay"]
    base = [a for a in args if a not in ("nop", "--agent", "--agents")]
    done = run_harness(project, *base, *agent, *model, "--sandbox", "docker", env=env)
    line = _refused(done, 2, tmp_path)
    assert "--replay" in line and "only replays a recorded cassette" in line


@pytest.mark.parametrize("args", [EXEC, RUN], ids=["exec", "run"])
def test_a_missing_bundle_is_refused_before_anything_is_written(
    args: list[str], project: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    (project / "scenarios/smoke/py-fast/repo.bundle").unlink()
    done = run_harness(project, *args, "--sandbox", "local", env=env)
    line = _refused(done, 2, tmp_path)
    assert "bundle 'repo.bundle' not found" in line
