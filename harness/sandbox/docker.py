"""A disposable Docker container as a sandbox.

The container idles (``sleep infinity`` under docker-init) and every command is a
``docker exec``. Timeouts are enforced inside with ``timeout -s KILL`` (which kills the
command's whole process group) and backed by a host-side deadline. Files the container
writes into a bind-mounted workspace are chowned back to the workspace's owner after
each command, so the host user can always change or delete them.
"""

from __future__ import annotations

import contextlib
import io
import posixpath
import secrets
import shutil
import tarfile
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import docker
from docker.errors import APIError, ImageNotFound, NotFound
from docker.models.containers import Container
from docker.models.networks import Network

from harness.errors import InfraError, UserError
from harness.sandbox.base import ExecResult, SandboxSpec
from harness.sandbox.engine import docker_client

KEEPALIVE = ["sleep", "infinity"]
BACKSTOP_GRACE_S = 30.0  # host-side deadline beyond the in-container timeout
KILLED_RC = 137  # 128 + SIGKILL, what `timeout -s KILL` reports
# An internal network still gives the host an address on its bridge, through which the
# container reaches every host service listening on 0.0.0.0. Without that address the
# network holds only its containers (e.g. the gateway), which is what "internal" means.
INTERNAL_NET_OPTIONS = {"com.docker.network.bridge.inhibit_ipv4": "true"}


class DockerSandbox:
    """Runs commands in a fresh container; ``stop`` removes it and its network."""

    def __init__(self, spec: SandboxSpec, *, client: docker.DockerClient | None = None) -> None:
        if not spec.image:
            raise UserError(
                "a docker sandbox needs an image",
                field="image",
                fix="set SandboxSpec.image (see `harness images ls`)",
            )
        self.spec = spec
        self.name = f"harness-{spec.phase}-{secrets.token_hex(4)}"
        self._client = client
        self._container: Container | None = None
        self._network: Network | None = None
        self._owner: tuple[int, int] | None = None

    # -- identity -----------------------------------------------------------------------

    @property
    def project_dir(self) -> str:
        return self.spec.project_dir

    @property
    def container_id(self) -> str | None:
        """Id of the running container (None before start and after stop)."""
        return self._container.id if self._container is not None else None

    @property
    def network_name(self) -> str | None:
        """The network the container is on, or None for ``network="none"``."""
        if self._network is not None:
            return str(self._network.name)
        return None if self.spec.network == "none" else self.spec.network

    @property
    def client(self) -> docker.DockerClient:
        if self._client is None:
            self._client = docker_client()
        return self._client

    def labels(self) -> dict[str, str]:
        """Labels put on everything this sandbox creates (cleanup finds them by these)."""
        return {"harness": "1", "harness.phase": self.spec.phase, **self.spec.labels}

    # -- lifecycle ----------------------------------------------------------------------

    def start(self) -> None:
        """Create the network (if internal) and the container; copy the workspace if asked."""
        spec = self.spec
        kwargs: dict[str, Any] = {
            "command": KEEPALIVE,
            "name": self.name,
            "detach": True,
            "init": True,
            "labels": self.labels(),
            "working_dir": spec.project_dir,
            "environment": dict(spec.env),
            "pids_limit": spec.pids,
            "mem_limit": spec.memory,
            "nano_cpus": int(spec.cpus * 1e9) if spec.cpus else None,
        }
        kwargs = {k: v for k, v in kwargs.items() if v is not None}
        mount = spec.workspace is not None and spec.mount_workspace
        if mount and spec.workspace is not None:
            host = Path(spec.workspace).resolve()
            host.mkdir(parents=True, exist_ok=True)
            kwargs["volumes"] = {str(host): {"bind": spec.project_dir, "mode": "rw"}}
            info = host.stat()
            if info.st_uid != 0:
                self._owner = (info.st_uid, info.st_gid)
        for host_path, inside in spec.mounts.items():  # toolchains, prepared dependencies
            bind, _, mode = inside.partition(":")
            kwargs.setdefault("volumes", {})[host_path] = {"bind": bind, "mode": mode or "ro"}
        try:
            if spec.network == "none":
                kwargs["network_mode"] = "none"
            elif spec.network == "internal":
                self._network = self.client.networks.create(
                    f"{self.name}-net",
                    driver="bridge",
                    internal=True,
                    labels=self.labels(),
                    options=INTERNAL_NET_OPTIONS,
                )
                kwargs["network"] = self._network.name
            else:
                kwargs["network"] = spec.network
            self._container = self.client.containers.run(spec.image, **kwargs)
        except ImageNotFound as exc:
            self.stop()
            raise InfraError(
                f"image {spec.image} is not built",
                fix="run `harness images build` (or `harness doctor`)",
            ) from exc
        except APIError as exc:
            self.stop()
            raise InfraError(f"could not start container from {spec.image}: {exc}") from exc
        if spec.workspace is not None and not spec.mount_workspace:
            self.copy_in(Path(spec.workspace), spec.project_dir)

    def stop(self) -> None:
        """Kill and remove the container and the network it created; safe to repeat."""
        errors: list[str] = []
        container, self._container = self._container, None
        if container is not None:
            if self._owner is not None:
                with contextlib.suppress(APIError, NotFound):
                    self._chown(container)
            try:
                container.remove(force=True)
            except NotFound:
                pass
            except APIError as exc:
                if exc.status_code != 409:  # 409: removal already in progress
                    errors.append(str(exc))
        network, self._network = self._network, None
        if network is not None:
            err = remove_network(network)
            if err:
                errors.append(err)
        if errors:
            raise InfraError(f"could not remove sandbox {self.name}: {'; '.join(errors)}")

    def __enter__(self) -> DockerSandbox:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- commands -----------------------------------------------------------------------

    def exec(
        self,
        cmd: list[str],
        *,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        timeout: float | None = None,
    ) -> ExecResult:
        """Run ``cmd`` in the container; a timeout kills it and sets ``timed_out``."""
        container = self._running()
        wrapped = ["timeout", "-s", "KILL", f"{timeout:g}", *cmd] if timeout else list(cmd)
        api = self.client.api
        began = time.monotonic()
        try:
            exec_id = api.exec_create(
                container.id,
                wrapped,
                environment=env or None,
                workdir=cwd or self.spec.project_dir,
            )["Id"]
        except APIError as exc:
            raise InfraError(f"docker exec failed in {self.name}: {exc}") from exc
        box: dict[str, Any] = {}

        def pump() -> None:
            try:
                box["out"] = api.exec_start(exec_id, demux=True)
            except Exception as exc:  # reported on the calling thread
                box["error"] = exc

        worker = threading.Thread(target=pump, name=f"{self.name}-exec", daemon=True)
        worker.start()
        worker.join(None if timeout is None else timeout + BACKSTOP_GRACE_S)
        if worker.is_alive():  # the in-container timeout did not fire: kill the container
            self.stop()
            return ExecResult(
                None, "", "killed by the host-side deadline", time.monotonic() - began, True
            )
        duration = time.monotonic() - began
        if "error" in box:
            raise InfraError(f"docker exec failed in {self.name}: {box['error']}")
        out, err = box.get("out") or (None, None)
        code = api.exec_inspect(exec_id).get("ExitCode")
        if self._owner is not None:
            self._chown(container)
        stdout, stderr = _text(out), _text(err)
        if timeout and code == KILLED_RC and duration >= timeout:
            return ExecResult(None, stdout, stderr, duration, True)
        return ExecResult(code, stdout, stderr, duration)

    # -- files --------------------------------------------------------------------------

    def copy_in(self, src: Path, dest: str) -> None:
        """Copy a host file or folder to ``dest`` (absolute, or relative to the project)."""
        container = self._running()
        src = Path(src)
        if not src.exists():
            raise FileNotFoundError(f"nothing to copy at {src}")
        target = self._absolute(dest).lstrip("/")
        owner = self._owner if self._in_workspace(dest) else None
        data = io.BytesIO()
        with tarfile.open(fileobj=data, mode="w") as tar:
            tar.add(str(src), arcname=target, filter=lambda info: _own(info, owner))
        try:
            container.put_archive("/", data.getvalue())
        except APIError as exc:
            raise InfraError(f"copy into {self.name}:{dest} failed: {exc}") from exc
        if owner is not None:  # folders the engine created on the way belong to root
            self._chown(container)

    def copy_out(self, src: str, dest: Path) -> None:
        """Copy ``src`` from the container to the host path ``dest`` (file or folder)."""
        container = self._running()
        path = self._absolute(src)
        try:
            stream, _stat = container.get_archive(path)
        except NotFound as exc:
            raise FileNotFoundError(f"nothing to copy at {self.name}:{path}") from exc
        except APIError as exc:
            raise InfraError(f"copy out of {self.name}:{path} failed: {exc}") from exc
        dest = Path(dest)
        with tempfile.TemporaryDirectory(prefix="harness-copyout-") as tmp:
            archive = Path(tmp) / "out.tar"
            with open(archive, "wb") as handle:
                for chunk in stream:
                    handle.write(chunk)
            unpacked = Path(tmp) / "x"
            with tarfile.open(archive) as tar:
                tar.extractall(unpacked, filter="tar")
            top = unpacked / posixpath.basename(path.rstrip("/") or "/")
            if top.is_dir() and not top.is_symlink():
                shutil.copytree(top, dest, symlinks=True, dirs_exist_ok=True)
            else:
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.move(str(top), dest)

    # -- helpers ------------------------------------------------------------------------

    def _running(self) -> Container:
        if self._container is None:
            raise InfraError(f"sandbox {self.name} is not running", fix="call start() first")
        return self._container

    def _absolute(self, path: str) -> str:
        return posixpath.normpath(posixpath.join(self.spec.project_dir, path))

    def _in_workspace(self, path: str) -> bool:
        full, root = self._absolute(path), posixpath.normpath(self.spec.project_dir)
        return full == root or full.startswith(root + "/")

    def _chown(self, container: Container) -> None:
        assert self._owner is not None
        uid, gid = self._owner
        container.exec_run(["chown", "-R", f"{uid}:{gid}", self.spec.project_dir], user="0")


def remove_network(network: Network) -> str | None:
    """Disconnect every container from ``network`` and remove it; None or an error text."""
    try:
        network.reload()
        for container in network.containers:
            with contextlib.suppress(NotFound, APIError):
                network.disconnect(container, force=True)
        network.remove()
    except NotFound:
        return None
    except APIError as exc:
        return str(exc)
    return None


def _own(info: tarfile.TarInfo, owner: tuple[int, int] | None) -> tarfile.TarInfo:
    uid, gid = owner or (0, 0)
    info.uid, info.gid = uid, gid
    info.uname = info.gname = "" if owner else "root"
    return info


def _text(data: bytes | None) -> str:
    return (data or b"").decode("utf-8", errors="replace")
