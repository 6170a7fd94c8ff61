"""A real Ray cluster on this machine for tests and benchmarks: ``ray start --block`` per
node, each in its own session, temp dir and ports, all on loopback.

The nodes use 127.0.0.2: Ray rewrites 127.0.0.1 and localhost to the machine's public
address when a driver joins, and these clusters must stay on loopback. Every node is one
process group (``ray start --block`` and what it starts), so a node is killed, or the
cluster torn down, by signalling its group: never ``ray stop``, which would stop every
Ray process of the machine, other people's included.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.signals import interruptible

NODE_IP = "127.0.0.2"


def free_port() -> int:
    with socket.socket() as s:
        s.bind((NODE_IP, 0))
        return int(s.getsockname()[1])


def ray_cli() -> str:
    """The ``ray`` script of this interpreter's environment."""
    beside = Path(sys.executable).parent / "ray"
    return str(beside) if beside.exists() else shutil.which("ray") or "ray"


def processes_with(marker: str) -> list[int]:
    """Live (not zombie) processes whose environment contains ``marker``."""
    found = []
    needle = marker.encode()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            if needle not in (proc / "environ").read_bytes():
                continue
            if (proc / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                continue
        except (OSError, IndexError):
            continue
        found.append(int(proc.name))
    return found


@dataclass
class Node:
    name: str
    proc: subprocess.Popen[bytes]
    tmp: Path  # its TMPDIR: trials in flight keep their scratch folders here

    def kill(self) -> None:
        """Lose the node: SIGKILL its process group (raylet, agents) and its workers (Ray
        puts those in groups of their own; they carry the node's TMPDIR)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        for pid in processes_with(f"TMPDIR={self.tmp}"):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)

    def trials_in_flight(self) -> list[Path]:
        return sorted(self.tmp.glob("harness-trial-*"))


@dataclass
class LocalCluster:
    root: Path
    port: int
    env: dict[str, str]
    nodes: list[Node] = field(default_factory=list)

    @property
    def address(self) -> str:
        return f"{NODE_IP}:{self.port}"

    def _start(self, name: str, head: bool, cpus: int, resources: dict[str, float]) -> Node:
        tmp = self.root / name
        tmp.mkdir()
        args = [
            ray_cli(),
            "start",
            "--block",
            "--disable-usage-stats",
            "--node-ip-address",
            NODE_IP,
            "--num-cpus",
            str(cpus),
            "--resources",
            json.dumps(resources),
            "--node-manager-port",
            str(free_port()),
            "--object-manager-port",
            str(free_port()),
            "--dashboard-agent-listen-port",
            str(free_port()),
            "--dashboard-agent-grpc-port",
            str(free_port()),
            "--runtime-env-agent-port",
            str(free_port()),
            "--metrics-export-port",
            str(free_port()),
        ]
        if head:
            args += ["--head", "--port", str(self.port), "--include-dashboard", "false"]
            args += ["--temp-dir", str(tmp / "ray")]
        else:
            args += ["--address", self.address]
        env = {**self.env, "TMPDIR": str(tmp), "RAY_TMPDIR": str(tmp)}
        with (tmp / "node.log").open("wb") as log:
            proc = subprocess.Popen(
                interruptible(args),  # Ray cancels a task with SIGINT: never ignored
                env=env,
                cwd=tmp,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        node = Node(name, proc, tmp)
        self.nodes.append(node)
        return node

    def add_node(self, name: str, cpus: int = 1, resources: dict[str, float] | None = None) -> Node:
        """Start a node and wait until the cluster counts it alive."""
        node = self._start(name, not self.nodes, cpus, resources or {"docker": 1})
        self.wait_alive(len([n for n in self.nodes if n.proc.poll() is None]))
        return node

    def wait_alive(self, count: int, timeout: float = 90.0) -> None:
        """Wait until the head counts ``count`` nodes alive (one short-lived driver)."""
        code = (
            "import ray,sys,time\n"
            "ray.init(address=sys.argv[1],logging_level='ERROR',log_to_driver=False)\n"
            "end=time.monotonic()+float(sys.argv[3])\n"
            "while sum(1 for n in ray.nodes() if n['Alive'])<int(sys.argv[2]):\n"
            "    assert time.monotonic()<end, 'timeout'\n"
            "    time.sleep(0.2)\n"
        )
        for _ in range(3):  # the head's GCS may not answer yet (slow to start under load)
            done = subprocess.run(
                [sys.executable, "-c", code, self.address, str(count), str(timeout)],
                env=self.env,
                capture_output=True,
                text=True,
                timeout=timeout + 30,
                check=False,
            )
            if done.returncode == 0:
                return
        logs = "\n".join(
            (n.tmp / "node.log").read_text(errors="replace")[-1500:] for n in self.nodes
        )
        raise RuntimeError(
            f"the local Ray cluster did not reach {count} nodes: {done.stderr[-1500:]}\n{logs}"
        )

    def teardown(self) -> None:
        """Stop every node (workers first, the head last), then remove the temp dirs."""
        for node in reversed(self.nodes):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(node.proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + 3
        for node in reversed(self.nodes):
            with contextlib.suppress(subprocess.TimeoutExpired):
                node.proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            node.kill()  # whatever of the group is left
        shutil.rmtree(self.root, ignore_errors=True)

    def leftovers(self) -> list[int]:
        """Live processes of this cluster (its temp root is in their environment)."""
        return processes_with(str(self.root))


@contextlib.contextmanager
def local_cluster(env: dict[str, str] | None = None, workers: int = 1) -> Iterator[LocalCluster]:
    """A head and ``workers`` worker nodes, each 1 CPU and ``{"docker": 1}``."""
    root = Path(tempfile.mkdtemp(prefix="hray-", dir="/tmp"))  # short: Ray's socket paths
    cluster = LocalCluster(root, free_port(), dict(env or os.environ))
    try:
        cluster.add_node("head")
        for i in range(workers):
            cluster.add_node(f"worker{i}")
        yield cluster
    finally:
        cluster.teardown()
