"""Bombs end the command, never the harness: fork, memory, disk (tmp, home, workspace) and
output bombs each stop with a named limit within seconds, while a sandbox next to them
keeps working, and nothing labelled with the trial is left behind (volumes included)."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import docker
import pytest

from harness.sandbox.base import SandboxSpec
from harness.sandbox.docker import DockerSandbox
from harness.scenario.policy import SandboxPolicy
from tests._docker import leftovers

pytestmark = [pytest.mark.docker, pytest.mark.integration]

SMALL = SandboxPolicy(workspace_size="24m", tmp_size="16m", home_size="16m", output_limit="256k")
BOMBS = {
    "pids": "f(){ f | f & }; f; sleep 60",
    "memory": "python3 -c 'a=[]\nwhile True: a.append(bytearray(8*1024*1024))'",
    "tmp": "while true; do head -c 1048576 /dev/zero >> /tmp/fill || sleep 0.1; done",
    "home": "while true; do head -c 1048576 /dev/zero >> $HOME/fill || sleep 0.1; done",
    "workspace": "while true; do head -c 1048576 /dev/zero >> fill; sleep 0.02; done",
    "output": "yes 'all work and no play'",
}
LIMIT = {"tmp": "disk", "home": "disk", "workspace": "disk"}


def everything_left(client: docker.DockerClient, trial: str) -> list[str]:
    query = {"label": [f"harness.trial={trial}"]}
    return leftovers(client, trial) + [
        f"volume {v.name}" for v in client.volumes.list(filters=query)
    ]


def _spec(image: str, trial: str, ws: Path) -> SandboxSpec:
    return SandboxSpec(
        phase="agent",
        image=image,
        workspace=ws,
        memory="128m",
        pids=64,
        cpus=0.5,
        labels={"harness.trial": trial},
        policy=SMALL,
    )


@pytest.mark.parametrize("bomb", sorted(BOMBS))
def test_bomb_ends_the_command_with_its_limit(
    client: docker.DockerClient, image: str, trial: str, tmp_path: Path, bomb: str
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    box = DockerSandbox(_spec(image, trial, ws), client=client)
    box.start()
    try:
        began = time.monotonic()
        res = box.exec(["sh", "-c", BOMBS[bomb]], timeout=90)
        spent = time.monotonic() - began
        assert res.limit == LIMIT.get(bomb, bomb), res
        assert not res.timed_out and spent < 30, spent
        assert res.limit_detail
        # the sandbox is still usable after the kill (transcripts can be copied out)
        after = box.exec(["sh", "-c", "echo alive"], timeout=30)
        assert after.stdout == "alive\n", after
        if bomb == "output":
            assert len(res.stdout.encode()) < 300 * 1024 and res.dropped > 0
            assert "the rest was dropped" in res.stdout
    finally:
        box.stop()
    assert everything_left(client, trial) == []
    owner = os.stat(ws).st_uid
    assert all(p.stat().st_uid == owner for p in ws.rglob("*"))  # handed back to its owner


def test_neighbour_keeps_working_during_a_fork_bomb(
    client: docker.DockerClient, image: str, trial: str, tmp_path: Path
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    bomb = DockerSandbox(_spec(image, trial, tmp_path / "a"), client=client)
    calm = DockerSandbox(_spec(image, trial, tmp_path / "b"), client=client)
    box: dict[str, object] = {}
    with bomb, calm:
        worker = threading.Thread(
            target=lambda: box.update(res=bomb.exec(["sh", "-c", BOMBS["pids"]], timeout=60))
        )
        worker.start()
        time.sleep(1.0)
        counted = calm.exec(["sh", "-c", "for i in 1 2 3; do sh -c true; done; echo ok"])
        assert counted.stdout == "ok\n" and counted.limit is None
        worker.join(60)
        assert getattr(box["res"], "limit", None) == "pids"
    assert everything_left(client, trial) == []
