"""Nothing is left behind: by label, and when a process holding a sandbox is signalled."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import docker
import pytest

from harness.sandbox.base import SandboxSpec
from harness.sandbox.cleanup import cleanup, label_filters
from harness.sandbox.docker import DockerSandbox
from harness.sandbox.owner import project_id
from tests._docker import leftovers

pytestmark = [pytest.mark.docker, pytest.mark.integration]

HOLDER = textwrap.dedent(
    """
    import sys
    from harness.sandbox.base import SandboxSpec
    from harness.sandbox.cleanup import cleanup_on_signals
    from harness.sandbox.docker import DockerSandbox

    image, trial = sys.argv[1], sys.argv[2]
    live = []
    with cleanup_on_signals(live):
        box = DockerSandbox(SandboxSpec(phase="agent", image=image, network="internal",
                                        labels={"harness.trial": trial}))
        live.append(box)
        box.start()
        print("READY", flush=True)
        box.exec(["sleep", "300"])
    print("NOT REACHED", flush=True)
    """
)


def test_label_filters() -> None:
    assert label_filters() == ["harness=1"]
    assert label_filters("j", "t") == ["harness=1", "harness.job=j", "harness.trial=t"]


def test_cleanup_removes_labelled_leftovers(
    client: docker.DockerClient, image: str, trial: str
) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    labels = {
        "harness": "1",
        "harness.job": f"{trial}-job",
        "harness.trial": trial,
        "harness.pid": str(dead.pid),  # made by a process that is gone: leftovers
        "harness.project": project_id(),  # this project's
    }
    for _ in range(2):  # sandboxes whose owner died without stopping them
        DockerSandbox(
            SandboxSpec(phase="agent", image=image, network="internal", labels=labels),
            client=client,
        ).start()
    volume = client.volumes.create(f"{trial}-vol", labels=labels)
    assert len(leftovers(client, trial)) == 4
    other = cleanup(job="some-other-job", client=client)
    assert len(leftovers(client, trial)) == 4 and other["containers"] == 0
    removed = cleanup(job=f"{trial}-job", client=client)
    # each sandbox's size-capped tmpfs volumes (/tmp, $HOME, /workspace) go with it
    assert removed == {"containers": 2, "networks": 2, "volumes": 1 + 2 * 3}
    assert leftovers(client, trial) == []
    assert client.volumes.list(filters={"name": volume.name}) == []


def test_success_and_timeout_paths_leave_nothing(
    client: docker.DockerClient, image: str, trial: str
) -> None:
    spec = SandboxSpec(
        phase="verify", image=image, network="internal", labels={"harness.trial": trial}
    )
    with DockerSandbox(spec, client=client) as box:
        assert box.exec(["true"]).ok
    assert leftovers(client, trial) == []
    with DockerSandbox(spec, client=client) as box:
        assert box.exec(["sleep", "60"], timeout=1).timed_out
    assert leftovers(client, trial) == []


@pytest.mark.parametrize(
    ("sig", "codes"),
    [(signal.SIGINT, {130, -signal.SIGINT}), (signal.SIGTERM, {143})],
)
def test_signal_removes_live_sandboxes(
    client: docker.DockerClient, image: str, trial: str, sig: int, codes: set[int]
) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, image, trial],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.strip() == "READY", proc.stderr.read() if proc.stderr else line
        assert len(leftovers(client, trial)) == 2  # container + internal network
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode in codes, err
        assert "NOT REACHED" not in out
        assert leftovers(client, trial) == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
