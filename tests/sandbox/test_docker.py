"""DockerSandbox: exec, files in and out, timeouts, ownership, and removal on every path."""

from __future__ import annotations

import os
from pathlib import Path

import docker
import pytest
from docker.errors import NotFound

from harness.backends import get_backend
from harness.errors import InfraError
from harness.images import inject_harness_source
from harness.sandbox.base import Sandbox, SandboxSpec
from harness.sandbox.docker import DockerSandbox
from harness.util.agentfiles import OverCap
from tests._docker import leftovers

pytestmark = [pytest.mark.docker, pytest.mark.integration]


def _spec(image: str, trial: str, **kw: object) -> SandboxSpec:
    return SandboxSpec(phase="agent", image=image, labels={"harness.trial": trial}, **kw)  # type: ignore[arg-type]


def _gone(client: docker.DockerClient, container_id: str) -> bool:
    try:
        client.containers.get(container_id)
    except NotFound:
        return True
    return False


def test_exec_env_cwd_and_limits(client: docker.DockerClient, image: str, trial: str) -> None:
    spec = _spec(image, trial, env={"A": "1"}, cpus=1.5, memory="256m", pids=64)
    with DockerSandbox(spec, client=client) as box:
        assert isinstance(box, Sandbox)
        result = box.exec(["sh", "-c", 'pwd; echo "$A$B"; echo oops >&2; exit 3'], env={"B": "2"})
        assert result.returncode == 3
        assert (result.stdout, result.stderr) == ("/workspace\n12\n", "oops\n")
        assert box.exec(["pwd"], cwd="/tmp").stdout == "/tmp\n"
        attrs = client.containers.get(box.container_id).attrs
        host = attrs["HostConfig"]
        assert (host["NanoCpus"], host["Memory"], host["PidsLimit"]) == (
            1_500_000_000,
            256 * 1024 * 1024,
            64,
        )
        assert attrs["Config"]["Labels"]["harness.phase"] == "agent"
        assert attrs["Config"]["Labels"]["harness.trial"] == trial
        missing = box.exec(["no-such-program-xyz"])
        assert missing.returncode not in (0, None)
    assert leftovers(client, trial) == []


def test_copy_in_and_out(
    client: docker.DockerClient, image: str, trial: str, tmp_path: Path
) -> None:
    src = tmp_path / "src"
    (src / "pkg" / "sub").mkdir(parents=True)
    (src / "pkg" / "sub" / "m.py").write_text("X = 1\n")
    (src / "one.txt").write_text("one")
    with DockerSandbox(_spec(image, trial, scratch={"/opt/deep": "16m"}), client=client) as box:
        with pytest.raises(InfraError, match="read-only"):  # the root filesystem
            box.copy_in(src / "one.txt", "/opt/one.txt")
        box.copy_in(src / "pkg", "/opt/deep/pkg")
        box.copy_in(src / "one.txt", "rel/one.txt")
        listing = box.exec(["sh", "-c", "cat /opt/deep/pkg/sub/m.py /workspace/rel/one.txt"])
        assert listing.stdout == "X = 1\none"
        box.exec(["sh", "-c", "mkdir -p made/in && echo hi > made/in/f"])
        out = tmp_path / "out"
        box.copy_out("made", out / "made")
        box.copy_out("/opt/deep/pkg/sub/m.py", out / "m.py")
        assert (out / "made" / "in" / "f").read_text() == "hi\n"
        assert (out / "m.py").read_text() == "X = 1\n"
        with pytest.raises(FileNotFoundError):
            box.copy_out("/nope", out / "nope")
        box.exec(["truncate", "-s", "2G", "huge"])  # sparse: its archive is 2 GiB
        with pytest.raises(OverCap):
            box.copy_out("huge", out / "huge", max_bytes=1 << 20)
        assert not (out / "huge").exists()


def test_timeout_kills_and_is_recorded(client: docker.DockerClient, image: str, trial: str) -> None:
    box = DockerSandbox(_spec(image, trial), client=client)
    box.start()
    container_id = box.container_id
    assert container_id is not None
    try:
        result = box.exec(["sh", "-c", "sleep 300 & sleep 300; echo never"], timeout=1)
        assert result.timed_out and result.returncode is None
        assert "never" not in result.stdout
        procs = box.exec(["ps", "-eo", "args"]).stdout
        assert "sleep 300" not in procs, procs
        assert box.exec(["true"], timeout=5).ok  # the sandbox is still usable
    finally:
        box.stop()
    assert _gone(client, container_id)
    box.stop()  # idempotent
    assert leftovers(client, trial) == []


def test_a_container_left_frozen_is_thawed_by_the_next_command(
    client: docker.DockerClient, image: str, trial: str
) -> None:
    """A kill whose thaw the engine refused leaves the container paused; the next command
    (the copy-out of transcripts, say) thaws it instead of failing with a 409."""
    with DockerSandbox(_spec(image, trial), client=client) as box:
        container = client.containers.get(box.container_id)
        container.pause()
        assert box.exec(["echo", "alive"], timeout=30).stdout == "alive\n"
        container.reload()
        assert container.status == "running"
    assert leftovers(client, trial) == []


def test_failure_inside_block_removes_everything(
    client: docker.DockerClient, image: str, trial: str
) -> None:
    with pytest.raises(RuntimeError), DockerSandbox(_spec(image, trial, network="internal")):
        assert leftovers(client, trial) != []
        raise RuntimeError("agent crashed")
    assert leftovers(client, trial) == []


def test_failed_start_leaves_nothing(client: docker.DockerClient, trial: str) -> None:
    box = DockerSandbox(_spec("harness/does-not-exist:0", trial, network="internal"), client=client)
    with pytest.raises(InfraError):
        box.start()
    assert leftovers(client, trial) == []
    box.stop()


def test_workspace_files_belong_to_its_owner(
    client: docker.DockerClient, image: str, trial: str, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "given.txt").write_text("x")
    os.chown(ws, 4321, 4322)
    with DockerSandbox(_spec(image, trial, workspace=ws), client=client) as box:
        box.exec(["sh", "-c", "mkdir -p d/e && touch d/e/f new.txt && cat given.txt"])
        box.copy_in(tmp_path / "ws" / "given.txt", "copied/given.txt")
        made = [p for p in ws.rglob("*") if p != ws / "given.txt"]
        assert len(made) == 6  # d, d/e, d/e/f, new.txt, copied, copied/given.txt
        owners = {(p.stat().st_uid, p.stat().st_gid) for p in made}
        assert owners == {(4321, 4322)}
        assert (ws / "new.txt").exists()


def test_copied_workspace_and_injected_source(
    client: docker.DockerClient, image: str, trial: str, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "app.py").write_text("print('app')\n")
    spec = _spec(image, trial, workspace=ws, mount_workspace=False)
    spec.phase = "verify"  # harness source goes into verifier (and gateway) sandboxes
    box = get_backend("docker").sandbox(spec)
    try:
        box.start()
        box.exec(["sh", "-c", "echo changed > app.py"])
        assert (ws / "app.py").read_text() == "print('app')\n"  # a copy, not the host's
        pythonpath = inject_harness_source(box)
        code = "import harness.errors as e; print(e.EXIT_INFRA)"
        result = box.exec(["python3", "-c", code], env={"PYTHONPATH": pythonpath})
        assert result.stdout == "3\n", result.stderr
        tamper = box.exec(["sh", "-c", f"echo x >> {pythonpath}/harness/errors.py"])
        assert tamper.returncode != 0  # the injected source is read-only to commands
    finally:
        box.stop()
    assert leftovers(client, trial) == []
