"""The built-in engine host: llama.cpp's server in a container, serving one GGUF model.

``start_engine(model)`` builds the ``engine`` image when needed, starts ``llama-server``
on the model (mounted read-only) and waits until it answers ``/health``. The container
sits on Docker's default bridge, where every trial's gateway container is attached when
it uses a fleet, and publishes its port on this machine's loopback for processes here
(``harness fleet status``, a local gateway, the tests). ``EngineHost.host_entry()`` is
its fleet.yml host entry; ``stop()`` removes the container. Containers carry the labels
``harness=1``, ``harness.engine=1`` and their maker (project, host, pid), so ``harness
sandbox cleanup`` removes those a dead process left.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
from docker.errors import APIError, DockerException, NotFound

from harness.errors import InfraError
from harness.fleet.engine_model import GgufFile
from harness.images.build import ensure_image
from harness.sandbox.engine import docker_client
from harness.sandbox.owner import owner_labels

IMAGE = "engine"
PORT = 8080
MOUNT = "/models"
ENGINE_LABEL = "harness.engine"


@dataclass
class EngineHost:
    """A running engine container: how to reach it, what it serves, how to stop it."""

    name: str  # the host's name in the fleet (telemetry, reports)
    alias: str  # the model identifier the engine answers to (``model`` in requests)
    model: GgufFile
    container_id: str
    url: str  # from this machine: http://127.0.0.1:<published port>
    bridge_url: str  # from containers on Docker's default bridge: http://<ip>:8080
    parallel: int
    build: str = ""  # llama-server's build, from /props
    props: dict[str, Any] = field(default_factory=dict)

    def host_entry(self, *, from_containers: bool = False) -> dict[str, Any]:
        """This host as a fleet.yml ``hosts`` entry (from a container or from here)."""
        return {
            "name": self.name,
            "base_url": self.bridge_url if from_containers else self.url,
            "max_parallel": self.parallel,
        }

    def fingerprint(self) -> dict[str, Any]:
        """What a run records about this host: engine build, model file and quantisation."""
        return {
            "engine": "llama.cpp",
            "build": self.build,
            "model_file": self.model.path.name,
            "sha256": self.model.sha256,
            "quantization": self.model.quant,
            "format": "gguf",
            "parallel": self.parallel,
        }

    def stop(self) -> None:
        """Remove the container (idempotent)."""
        with contextlib.suppress(NotFound, APIError, DockerException):
            docker_client().containers.get(self.container_id).remove(force=True)


def engine_command(
    model: GgufFile, alias: str, *, parallel: int, context: int, threads: int
) -> list[str]:
    """llama-server's arguments: the model, all interfaces, ``context`` tokens per slot."""
    return [
        "-m", f"{MOUNT}/{model.path.name}", "--alias", alias,
        "--host", "0.0.0.0", "--port", str(PORT),
        "-t", str(threads), "-np", str(parallel), "-c", str(context * parallel),
        "--jinja", "--no-webui",
    ]  # fmt: skip


def start_engine(
    model: GgufFile,
    alias: str,
    *,
    name: str = "engine",
    parallel: int = 4,
    context: int = 8192,
    threads: int | None = None,
    labels: dict[str, str] | None = None,
    timeout: float = 120.0,
) -> EngineHost:
    """Start the engine on ``model``; returns once it answers (or raises ``InfraError``).

    ``context`` is per slot (``parallel`` slots). ``threads`` defaults to half the cores:
    llama.cpp's threads spin at each step's barrier, so on a busy machine one thread per
    two cores decodes far faster than all of them (seen on 2 cores at load 12: 1 thread
    ~30 tokens/s, 2 threads ~1 token/s).
    """
    ref = ensure_image(IMAGE)
    if threads is None:
        threads = max(1, (os.cpu_count() or 2) // 2)
    client = docker_client()
    ports: dict[str, Any] = {f"{PORT}/tcp": ("127.0.0.1", None)}  # loopback, any free port
    try:
        container = client.containers.run(
            ref.tag,
            engine_command(model, alias, parallel=parallel, context=context, threads=threads),
            detach=True,
            # its project and maker (harness sandbox cleanup removes a dead process's)
            labels={"harness": "1", ENGINE_LABEL: "1", **owner_labels(), **(labels or {})},
            volumes={str(model.path.parent): {"bind": MOUNT, "mode": "ro"}},
            ports=ports,
            network="bridge",
        )
    except (APIError, DockerException) as exc:
        raise InfraError(f"the engine container did not start: {exc}") from exc
    try:
        container.reload()
        bound = (container.attrs["NetworkSettings"].get("Ports") or {}).get(f"{PORT}/tcp")
        if not bound:  # it exited before docker published its port (a model it cannot load)
            tail = container.logs(tail=5).decode("utf-8", "replace").strip()
            raise InfraError(f"the engine exited before it listened: {tail[-300:]}")
        published = bound[0]["HostPort"]
        ip = container.attrs["NetworkSettings"]["Networks"]["bridge"]["IPAddress"]
        host = EngineHost(
            name=name,
            alias=alias,
            model=model,
            container_id=str(container.id),
            url=f"http://127.0.0.1:{published}",
            bridge_url=f"http://{ip}:{PORT}",
            parallel=parallel,
        )
        host.props = _wait_ready(host, container, timeout)
        host.build = str(host.props.get("build_info", ""))
        return host
    except BaseException:
        with contextlib.suppress(APIError, DockerException):
            container.remove(force=True)
        raise


def _wait_ready(host: EngineHost, container: Any, timeout: float) -> dict[str, Any]:
    """Poll ``/health`` until 200 (503 while the model loads); then read ``/props``."""
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{host.url}/health", timeout=2).status_code == 200:
                props = httpx.get(f"{host.url}/props", timeout=5).json()
                return props if isinstance(props, dict) else {}
        container.reload()
        if container.status in ("exited", "dead") or time.monotonic() > deadline:
            tail = container.logs(tail=8).decode(errors="replace").strip().splitlines()
            what = "exited" if container.status in ("exited", "dead") else "never answered"
            raise InfraError(f"the engine {what} on {host.model.path.name}: {' | '.join(tail)}")
        time.sleep(0.2)


@contextlib.contextmanager
def running_engine(model: GgufFile, alias: str, **options: Any) -> Iterator[EngineHost]:
    """``start_engine`` for the block, stopped after it."""
    host = start_engine(model, alias, **options)
    try:
        yield host
    finally:
        host.stop()
