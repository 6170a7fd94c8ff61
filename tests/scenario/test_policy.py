"""The hardened defaults as the engine sees them, and each relaxation a scenario may ask."""

from __future__ import annotations

import os
from pathlib import Path

import docker
import pytest

from harness.sandbox.base import SandboxSpec
from harness.sandbox.docker import DockerSandbox
from harness.scenario.policy import SandboxPolicy, parse_size

RAW = "import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)"


def _spec(image: str, trial: str, ws: Path, policy: SandboxPolicy) -> SandboxSpec:
    return SandboxSpec(
        phase="agent", image=image, workspace=ws, labels={"harness.trial": trial}, policy=policy
    )


@pytest.mark.unit
def test_sizes_and_relaxations() -> None:
    assert parse_size("512m") == 512 * 1024**2 and parse_size("1.5G") == 3 * 1024**3 // 2
    with pytest.raises(ValueError):
        parse_size("lots")
    assert SandboxPolicy().relaxed() == []
    relaxed = SandboxPolicy(non_root=False, capabilities=["sys_ptrace", "CAP_NET_RAW"])
    assert relaxed.relaxed() == ["non-root", "cap:NET_RAW", "cap:SYS_PTRACE"]
    # an added capability needs root to take effect, and is recorded as such
    assert SandboxPolicy(capabilities=["NET_RAW"]).relaxed() == ["non-root", "cap:NET_RAW"]


@pytest.mark.docker
@pytest.mark.integration
def test_defaults_are_hardened(
    client: docker.DockerClient, image: str, trial: str, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with DockerSandbox(_spec(image, trial, ws, SandboxPolicy()), client=client) as box:
        host = client.containers.get(box.container_id).attrs["HostConfig"]
        assert host["CapDrop"] == ["ALL"] and not host["CapAdd"]
        assert host["ReadonlyRootfs"] is True
        assert host["SecurityOpt"] == ["no-new-privileges"]
        assert "docker.sock" not in str(host["Binds"])
        script = (
            "id -u; touch /workspace/w $HOME/h /tmp/t && echo writable; "
            "touch /usr/x 2>/dev/null || echo ro-root; df -m /tmp | tail -1"
        )
        res = box.exec(["sh", "-c", script])
        lines = res.stdout.splitlines()
        uid = os.stat(ws).st_uid
        assert lines[0] == str(uid if uid != 0 else 10001)
        assert lines[1:3] == ["writable", "ro-root"]
        assert lines[3].split()[1] == "1024"  # /tmp is a 1 GiB tmpfs
        assert box.exec(["python3", "-c", RAW]).returncode != 0
    assert os.stat(ws / "w").st_uid == os.stat(ws).st_uid  # owned as the host expects


@pytest.mark.docker
@pytest.mark.integration
def test_relaxed_items_apply(
    client: docker.DockerClient, image: str, trial: str, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    os.chown(ws, 4321, 4322)
    policy = SandboxPolicy(read_only_root=False, non_root=False, capabilities=["NET_RAW"])
    with DockerSandbox(_spec(image, trial, ws, policy), client=client) as box:
        host = client.containers.get(box.container_id).attrs["HostConfig"]
        assert host["ReadonlyRootfs"] is False
        res = box.exec(["sh", "-c", "id -u; touch /usr/local/x && echo rw-root; touch made"])
        assert res.stdout.splitlines() == ["0", "rw-root"], res
        assert box.exec(["python3", "-c", RAW]).returncode == 0
    assert (os.stat(ws / "made").st_uid, os.stat(ws / "made").st_gid) == (4321, 4322)
