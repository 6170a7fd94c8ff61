"""A disposable, hardened Docker container as a sandbox.

The container idles (``sleep infinity`` under docker-init, as an unprivileged uid of its
own) and every command is a ``docker exec`` as the run user: the host workspace owner's
uid:gid, or ``SANDBOX_UID`` when the workspace belongs to root (the workspace is then
handed to that uid for the sandbox's life and back at ``stop``). By default (see
``harness.scenario.policy``) every capability is dropped, ``no-new-privileges`` is set,
the root filesystem is read-only, and only the workspace, ``$HOME``, ``/tmp`` and any
``scratch`` folders are writable; the last three are size-capped tmpfs volumes.

Timeouts are enforced inside with ``timeout -s KILL`` and backed by a host-side deadline.
While a command runs, ``harness.sandbox.limits`` watches for bombs; output is kept up to
the policy's cap per stream and the rest counted and dropped. A limit (or ``interrupt``)
kills the command's processes and is reported in ``ExecResult.limit``.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import secrets
import tarfile
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, cast

import docker
from docker.errors import APIError, ImageNotFound, NotFound
from docker.models.containers import Container
from docker.models.networks import Network
from docker.models.volumes import Volume

from harness.errors import InfraError, UserError
from harness.sandbox.base import ExecResult, SandboxSpec
from harness.sandbox.docker_io import (
    HOME_DIR,
    Capture,
    chown_tree,
    identity_files,
    kill_processes,
    limit_watch,
    own,
    remove_network,
    thaw,
    unpack_archive,
)
from harness.sandbox.docker_run import ROOT_CAPS, run_options
from harness.sandbox.engine import docker_client
from harness.sandbox.limits import LimitWatch, keepalive_pids
from harness.sandbox.owner import owner_labels
from harness.scenario.policy import parse_size

BACKSTOP_GRACE_S = 30.0  # host-side deadline beyond the in-container timeout
KILL_GRACE_S = 10.0  # after a limit kill, how long the command may take to go away
POLL_S = 0.25  # how often a running command's limits are checked
KILLED_RC = 137  # 128 + SIGKILL, what `timeout -s KILL` reports
SANDBOX_UID = 10001  # the run user when the workspace belongs to root
KEEPER_UID = 65534  # the keep-alive's uid: the run user cannot signal it
HARNESS_SRC = "/opt/harness"  # where inject_harness_source puts the package (root-owned)
# An internal network still gives the host an address on its bridge, through which the
# container reaches every host service listening on 0.0.0.0. Without that address the
# network holds only its containers (e.g. the gateway), which is what "internal" means.
INTERNAL_NET_OPTIONS = {"com.docker.network.bridge.inhibit_ipv4": "true"}


class DockerSandbox:
    """Runs commands in a fresh container; ``stop`` removes it, its volumes and network."""

    def __init__(
        self,
        spec: SandboxSpec,
        *,
        client: docker.DockerClient | None = None,
        create_project: bool = True,
    ) -> None:
        """``create_project=False``: a project folder inside a scratch place is left for
        the first command to make (the verifier unpacks its tree there itself), saving
        the archive round trip that would make it empty."""
        if not spec.image:
            raise UserError(
                "a docker sandbox needs an image",
                field="image",
                fix="set SandboxSpec.image (see `harness images ls`)",
            )
        self.spec = spec
        self.name = f"harness-{spec.phase}-{secrets.token_hex(4)}"
        self._client = client
        self._create_project = create_project
        self._container: Container | None = None
        self._network: Network | None = None
        self._volumes: list[Volume] = []
        self._tmpfs: dict[str, Path] = {}  # writable place -> host mountpoint of its tmpfs
        self._owner: tuple[int, int] | None = None  # chown back to this after (root mode)
        self._handback: tuple[Path, tuple[int, int]] | None = None  # workspace, owner
        self._interrupt: str | None = None
        self._keep: set[int] = set()  # host pids of the keep-alive (never killed on a limit)
        self._full: set[str] = set()  # writable places a command already filled
        self.user: tuple[int, int] = (SANDBOX_UID, SANDBOX_UID)

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
        base = {"harness": "1", **owner_labels(), "harness.phase": self.spec.phase}
        return {**base, **self.spec.labels}

    # -- lifecycle ----------------------------------------------------------------------

    def start(self) -> None:
        """Create the network, volumes and container; copy the workspace in if asked."""
        spec, policy = self.spec, self.spec.policy
        mount = spec.workspace is not None and spec.mount_workspace
        host: Path | None = None
        owner = (0, 0)
        if mount and spec.workspace is not None:
            host = Path(spec.workspace).resolve()
            host.mkdir(parents=True, exist_ok=True)
            info = host.stat()
            owner = (info.st_uid, info.st_gid)
        caps = list(policy.capabilities)
        if not policy.runs_as_root:
            self.user = owner if owner[0] != 0 else (SANDBOX_UID, SANDBOX_UID)
            keeper = KEEPER_UID if self.user[0] != KEEPER_UID else KEEPER_UID - 1
        else:  # capabilities only take effect for root (the engine gives others none)
            self.user, keeper = (0, 0), 0
            caps = sorted(set(caps) | set(ROOT_CAPS))
            if owner[0] != 0:
                self._owner = owner
        kwargs = run_options(spec, self.name, keeper, caps, self.labels(), mount)
        try:
            volumes: dict[str, dict[str, str]] = {}
            if host is not None:
                if not policy.runs_as_root and owner[0] == 0:
                    self._hand_over(host, owner)
                volumes[str(host)] = {"bind": spec.project_dir, "mode": "rw"}
            places = {"/tmp": (policy.tmp_size, "1777"), HOME_DIR: (policy.home_size, "0700")}
            places.update({path: (size, "0755") for path, size in spec.scratch.items()})
            if spec.phase != "agent":  # harness source for the verifier and gateway
                places[HARNESS_SRC] = ("256m", "0755")
            project = posixpath.normpath(spec.project_dir)
            inside = any(project.startswith(p.rstrip("/") + "/") for p in places)
            if host is None and not inside:  # a copied-in project gets its own capped place
                places[project] = (policy.workspace_size, "0755")
                kwargs["working_dir"] = project
            for path, (size, mode) in places.items():
                volume = self._tmpfs_volume(path, size, mode)
                volumes[str(volume.name)] = {"bind": path, "mode": "rw"}
            if self.user[0] != 0:
                volumes.update(identity_files(self.user))
            for host_path, bind in spec.mounts.items():  # toolchains, prepared dependencies
                target, _, mode = bind.partition(":")
                volumes[host_path] = {"bind": target, "mode": mode or "ro"}
            kwargs["volumes"] = volumes
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
            container = cast(Container, self.client.containers.run(cast(str, spec.image), **kwargs))
            self._container = container
            container.reload()
            state = container.attrs.get("State") or {}
            self._keep = keepalive_pids(int(state.get("Pid") or 0))
        except ImageNotFound as exc:
            self.stop()
            raise InfraError(
                f"image {spec.image} is not built",
                fix="run `harness images build` (or `harness doctor`)",
            ) from exc
        except (APIError, OSError) as exc:
            self.stop()
            raise InfraError(f"could not start container from {spec.image}: {exc}") from exc
        except BaseException:
            self.stop()
            raise
        if host is None and inside and self._create_project:  # make it in its scratch place
            with tempfile.TemporaryDirectory(prefix="harness-empty-") as empty:
                self.copy_in(Path(empty), spec.project_dir)
        if spec.workspace is not None and not spec.mount_workspace:
            self.copy_in(Path(spec.workspace), spec.project_dir)

    def _tmpfs_volume(self, path: str, size: str, mode: str) -> Volume:
        uid, gid = (0, 0) if path == HARNESS_SRC else self.user
        tag = path.strip("/").replace("/", "-") or "root"
        volume = self.client.volumes.create(
            name=f"{self.name}-{tag}",
            driver="local",
            driver_opts={
                "type": "tmpfs",
                "device": "tmpfs",
                "o": f"size={parse_size(size)},uid={uid},gid={gid},mode={mode}",
            },
            labels=self.labels(),
        )
        self._volumes.append(volume)
        self._tmpfs[path] = Path(volume.attrs.get("Mountpoint", ""))
        return volume

    def _hand_over(self, host: Path, owner: tuple[int, int]) -> None:
        """Give a root-owned workspace to the run user for the sandbox's life."""
        if os.geteuid() != 0:
            raise InfraError(
                f"the workspace {host} belongs to root but harness does not run as root",
                fix="run harness as the workspace's owner, or set sandbox: {non-root: false}",
            )
        self._handback = (host, owner)
        chown_tree(host, self.user)

    def stop(self) -> None:
        """Kill and remove the container, its volumes and network; safe to repeat."""
        errors: list[str] = []
        container, self._container = self._container, None
        if container is not None:
            if self._owner is not None:
                with contextlib.suppress(APIError, NotFound):
                    self._chown(container)
            try:
                container.remove(force=True, v=True)
            except NotFound:
                pass
            except APIError as exc:
                if exc.status_code != 409:  # 409: removal already in progress
                    errors.append(str(exc))
        volumes, self._volumes = self._volumes, []
        for volume in volumes:
            with contextlib.suppress(NotFound):
                try:
                    volume.remove(force=True)
                except APIError as exc:
                    errors.append(str(exc))
        network, self._network = self._network, None
        if network is not None:
            err = remove_network(network)
            if err:
                errors.append(err)
        handback, self._handback = self._handback, None
        if handback is not None:
            chown_tree(*handback)
        if errors:
            raise InfraError(f"could not remove sandbox {self.name}: {'; '.join(errors)}")

    def __enter__(self) -> DockerSandbox:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- commands -----------------------------------------------------------------------

    def interrupt(self, reason: str) -> None:
        """Stop the running command (and refuse later ones) from another thread; their
        results say ``limit=reason``."""
        self._interrupt = reason

    def exec(
        self,
        cmd: list[str],
        *,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        timeout: float | None = None,
    ) -> ExecResult:
        """Run ``cmd`` as the run user; a timeout, a limit or an interrupt stops it.

        After ``interrupt`` every command is refused at once (the agent has been stopped).
        """
        container = self._running()
        if self._interrupt:
            return ExecResult(None, "", "", 0.0, limit=self._interrupt, limit_detail="stopped")
        wrapped = ["timeout", "-s", "KILL", f"{timeout:g}", *cmd] if timeout else list(cmd)
        api = self.client.api
        began = time.monotonic()

        def create() -> str:
            return str(
                api.exec_create(
                    container.id,
                    wrapped,
                    environment=env or None,
                    workdir=cwd or self.spec.project_dir,
                    user=f"{self.user[0]}:{self.user[1]}",
                )["Id"]
            )

        try:
            try:
                exec_id = create()
            except APIError as exc:  # left frozen by a kill whose thaw failed: thaw, again
                if "is paused" not in str(exc) or not thaw(container):
                    raise
                exec_id = create()
        except APIError as exc:
            raise InfraError(f"docker exec failed in {self.name}: {exc}") from exc
        cap = self.spec.policy.bytes("output_limit")
        sink = Capture(cap)
        box: dict[str, Any] = {}

        def pump() -> None:
            try:
                for out, err in api.exec_start(exec_id, stream=True, demux=True):
                    sink.add(0, out)
                    sink.add(1, err)
            except Exception as exc:  # reported on the calling thread
                box["error"] = exc

        watch = limit_watch(container, self.spec, self._tmpfs, self._full)
        worker = threading.Thread(target=pump, name=f"{self.name}-exec", daemon=True)
        worker.start()
        deadline = None if timeout is None else began + timeout + BACKSTOP_GRACE_S
        limit: tuple[str, str] | None = None
        killed_at = 0.0
        while worker.is_alive():
            worker.join(POLL_S)
            if not worker.is_alive():
                break
            now = time.monotonic()
            if limit is None:
                limit = self._limit_hit(watch, sink)
                if limit is not None:
                    killed_at = now
                    kill_processes(container, self._keep, self.user)
            elif now - killed_at > KILL_GRACE_S:  # the kill did not land: end the container
                with contextlib.suppress(APIError, NotFound):
                    container.kill()
                worker.join(KILL_GRACE_S)
                break
            if deadline is not None and now > deadline:  # the in-container timeout failed
                self.stop()
                return ExecResult(None, "", "killed by the host-side deadline", now - began, True)
        duration = time.monotonic() - began
        if limit is None:  # a bomb that ended the command by itself still counts
            limit = self._limit_hit(watch, sink, final=True)
        if "error" in box and limit is None:
            raise InfraError(f"docker exec failed in {self.name}: {box['error']}")
        code = api.exec_inspect(exec_id).get("ExitCode")
        if self._owner is not None and self._container is not None:
            with contextlib.suppress(APIError):
                self._chown(container)
        stdout, stderr = sink.text(0), sink.text(1)
        if limit is not None:
            return ExecResult(
                code,
                stdout,
                stderr,
                duration,
                limit=limit[0],
                limit_detail=limit[1],
                dropped=sink.dropped,
            )
        if timeout and code == KILLED_RC and duration >= timeout:
            return ExecResult(None, stdout, stderr, duration, True, dropped=sink.dropped)
        return ExecResult(code, stdout, stderr, duration, dropped=sink.dropped)

    def _limit_hit(
        self, watch: LimitWatch, sink: Capture, final: bool = False
    ) -> tuple[str, str] | None:
        if self._interrupt:
            return self._interrupt, f"stopped: {self._interrupt}"
        if sink.dropped:
            return "output", (
                f"output over {sink.cap // 1024**2 or 1} MiB per stream; "
                f"{sink.dropped} bytes dropped"
            )
        if final:
            watch._next_du = 0.0  # one last measurement of the workspace
        found = watch.check()
        if found is not None and watch.hit:
            self._full.add(watch.hit)
        return found

    # -- files --------------------------------------------------------------------------

    def copy_in(self, src: Path, dest: str) -> None:
        """Copy a host file or folder to ``dest`` (absolute, or relative to the project).

        Files are owned by the run user. The archive is unpacked into the writable place
        that holds ``dest`` (the root filesystem is read-only), creating folders on the way.
        """
        container = self._running()
        src = Path(src)
        if not src.exists():
            raise FileNotFoundError(f"nothing to copy at {src}")
        target = self._absolute(dest)
        if target == HARNESS_SRC or target.startswith(HARNESS_SRC + "/"):
            owner: tuple[int, int] | None = (0, 0)  # read-only to the commands that run
        elif self.user[0] != 0:
            owner = self.user
        else:
            owner = self._owner if self._in_workspace(dest) else None
        base = self._writable_base(target)
        rel = posixpath.relpath(target, base)
        # the archive is spooled to a file, never held in memory
        with tempfile.TemporaryFile(prefix="harness-copyin-") as data:
            with tarfile.open(fileobj=data, mode="w") as tar:
                parts = rel.split("/")[:-1] if rel != "." else []
                for i in range(len(parts)):  # folders on the way, owned like the rest
                    info = tarfile.TarInfo("/".join(parts[: i + 1]))
                    info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, int(time.time())
                    tar.addfile(own(info, owner))
                tar.add(str(src), arcname=rel, filter=lambda info: own(info, owner))
            data.seek(0)
            try:
                container.put_archive(base, data)
            except APIError as exc:
                raise InfraError(f"copy into {self.name}:{dest} failed: {exc}") from exc
        if self._owner is not None and owner is not None:  # root mode: hand files back
            self._chown(container)

    def _writable_base(self, target: str) -> str:
        """The mount point that holds ``target`` (a tmpfs, scratch or the workspace)."""
        places = list(self._tmpfs)
        if self.spec.workspace is not None and self.spec.mount_workspace:
            places.append(posixpath.normpath(self.spec.project_dir))
        best = "/"
        for place in places:
            if (target == place or target.startswith(place + "/")) and len(place) > len(best):
                best = place
        return best

    def copy_out(self, src: str, dest: Path, max_bytes: int | None = None) -> None:
        """Copy ``src`` from the container to the host path ``dest`` (file or folder);
        ``OverCap`` as soon as its archive passes ``max_bytes`` (the stream is dropped)."""
        container = self._running()
        path = self._absolute(src)
        try:
            stream, _stat = container.get_archive(path)
        except NotFound as exc:
            raise FileNotFoundError(f"nothing to copy at {self.name}:{path}") from exc
        except APIError as exc:
            raise InfraError(f"copy out of {self.name}:{path} failed: {exc}") from exc
        unpack_archive(stream, path, Path(dest), max_bytes)

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
