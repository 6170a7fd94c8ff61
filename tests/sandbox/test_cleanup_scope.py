"""``harness sandbox cleanup`` leaves a shared machine alone: it touches only this
project's objects (label ``harness.project``), of one job (``--job``) or older than
``--older-than``; it lists before it removes (``--dry-run``; without ``--yes`` and no
terminal it only lists); a running trial's container (its maker alive) is kept unless
``--trial`` names it. Tested beside another project's running trial and a container that
is no harness's at all."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest
from docker.errors import NotFound

from harness.config.settings import Settings
from harness.sandbox.base import SandboxSpec
from harness.sandbox.cleanup import cleanup
from harness.sandbox.docker import DockerSandbox
from harness.sandbox.owner import PID, PROJECT, _project_id
from tests._docker import new_trial
from tests.conftest import run_harness

pytestmark = [pytest.mark.docker, pytest.mark.integration]


def _dead_pid() -> str:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return str(proc.pid)


@pytest.fixture
def ours(project: Path) -> str:
    return _project_id(str(Settings.from_env(cwd=project).project_root.resolve()))


@pytest.fixture
def trials(client: docker.DockerClient) -> Iterator[list[str]]:
    made: list[str] = []
    yield made
    for t in made:
        cleanup(trial=t, client=client, all_projects=True)


def _start(
    client: docker.DockerClient, image: str, trials: list[str], **labels: str
) -> DockerSandbox:
    trial = new_trial()
    trials.append(trial)
    box = DockerSandbox(
        SandboxSpec(phase="agent", image=image, labels={"harness.trial": trial, **labels}),
        client=client,
    )
    box.start()
    return box


def _exists(client: docker.DockerClient, box: DockerSandbox) -> bool:
    try:
        client.containers.get(box.container_id or "")
    except NotFound:
        return False
    return True


def test_cleanup_touches_only_this_projects_leftovers(
    client: docker.DockerClient, image: str, project: Path, ours: str, trials: list[str]
) -> None:
    other = _start(client, image, trials, **{PROJECT: "0therpr0ject"})  # another's, running
    stranger = client.containers.run(image, ["sleep", "300"], detach=True, labels={"x": "1"})
    leftover = _start(client, image, trials, **{PROJECT: ours, PID: _dead_pid()})
    live = _start(client, image, trials, **{PROJECT: ours})  # this process runs it
    try:
        dry = run_harness(project, "sandbox", "cleanup", "--dry-run")
        assert dry.returncode == 0, dry.stderr
        assert f"remove  container {leftover.name}" in dry.stdout
        assert f"keep    container {live.name}" in dry.stdout and "running" in dry.stdout
        assert other.name not in dry.stdout and "would be removed" in dry.stdout
        asked = run_harness(project, "sandbox", "cleanup")  # no terminal, no --yes: lists
        assert "pass --yes to remove them" in asked.stdout
        assert _exists(client, leftover)

        done = run_harness(project, "sandbox", "cleanup", "--yes")
        assert done.returncode == 0, done.stderr
        assert not _exists(client, leftover)
        assert _exists(client, live) and _exists(client, other)
        stranger.reload()
        assert stranger.status == "running"

        named = run_harness(project, "sandbox", "cleanup", "--trial", trials[-1], "--yes")
        assert named.returncode == 0 and not _exists(client, live)
        assert _exists(client, other)
    finally:
        stranger.remove(force=True)  # the sandboxes go with the `trials` fixture


def test_older_than_and_job_narrow_the_cleanup(
    client: docker.DockerClient, image: str, project: Path, ours: str, trials: list[str]
) -> None:
    dead = _dead_pid()
    mine = _start(client, image, trials, **{PROJECT: ours, PID: dead, "harness.job": "j1"})
    theirs = _start(client, image, trials, **{PROJECT: ours, PID: dead, "harness.job": "j2"})
    young = run_harness(project, "sandbox", "cleanup", "--older-than", "1h", "--yes")
    assert "younger than --older-than" in young.stdout and _exists(client, mine)
    bad = run_harness(project, "sandbox", "cleanup", "--older-than", "soon")
    assert bad.returncode == 2 and "--older-than" in bad.stderr
    job = run_harness(project, "sandbox", "cleanup", "--job", "j1", "--yes")
    assert job.returncode == 0, job.stderr
    assert not _exists(client, mine) and _exists(client, theirs)
