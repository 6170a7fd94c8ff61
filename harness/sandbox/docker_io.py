"""The Docker sandbox's helpers that need no sandbox object: identity files, a command's
limit watch, killing the run user's processes, removing a network, tar ownership,
unpacking an archive copied out and bounded output capture (``harness.sandbox.docker``
uses them)."""

from __future__ import annotations

import contextlib
import os
import posixpath
import shutil
import tarfile
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

from docker.errors import APIError, NotFound
from docker.models.containers import Container
from docker.models.networks import Network

from harness.config.settings import cache_dir
from harness.sandbox.base import SandboxSpec
from harness.sandbox.limits import LimitWatch, host_pids, kill_host_pids
from harness.util.agentfiles import OverCap, data_filter
from harness.util.capped import Capped
from harness.util.deeptree import walk
from harness.util.fs import write_atomic

HOME_DIR = "/home/harness"  # the run user's $HOME in the sandbox


def identity_files(user: tuple[int, int]) -> dict[str, dict[str, str]]:
    """/etc/passwd and /etc/group naming the run user (tools look themselves up).

    Kept once per uid:gid in harness's cache folder (never removed, so a killed run
    leaves nothing new behind; the content depends only on the ids).
    """
    uid, gid = user
    folder = cache_dir() / "sandbox-identity" / f"{uid}-{gid}"
    files = {
        "passwd": "root:x:0:0:root:/root:/bin/bash\n"
        f"harness:x:{uid}:{gid}:harness:{HOME_DIR}:/bin/bash\n"
        "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
        "group": f"root:x:0:\nharness:x:{gid}:\nnogroup:x:65534:\n",
    }
    mounts = {}
    for name, text in files.items():
        path = folder / name
        if not path.is_file() or path.read_text() != text:
            write_atomic(path, text)
            path.chmod(0o644)
        mounts[str(path)] = {"bind": f"/etc/{name}", "mode": "ro"}
    folder.chmod(0o755)
    return mounts


def limit_watch(
    container: Container, spec: SandboxSpec, tmpfs: dict[str, Path], full: set[str]
) -> LimitWatch:
    """The watch over one command's limits (tmpfs places, the workspace's size cap)."""
    workspace = None
    if spec.workspace is not None and spec.mount_workspace:
        workspace = Path(spec.workspace).resolve()
    parent = (container.attrs.get("HostConfig") or {}).get("CgroupParent") or ""
    return LimitWatch(
        container_id=str(container.id),
        cgroup_parent=parent,
        tmpfs={path: mp for path, mp in tmpfs.items() if str(mp)},
        workspace=workspace,
        workspace_cap=spec.policy.bytes("workspace_size") if workspace else None,
        skip=full,  # reported once; later commands (copying out, cleanup) may run
    )


def kill_processes(container: Container, keep: set[int], user: tuple[int, int]) -> None:
    """Kill every process of the run user (the keep-alive runs as another uid).

    From the host when it can see the container's processes (freeze, kill, thaw:
    a fork bomb cannot outrun it); else by a ``kill -9 -1`` exec as the run user.
    """
    parent = (container.attrs.get("HostConfig") or {}).get("CgroupParent") or ""
    if host_pids(str(container.id), keep, parent) is not None:
        try:
            container.pause()
        except (APIError, NotFound):  # a failed freeze may still leave it frozen
            thaw(container)  # then the kill from inside below
        else:
            try:
                kill_host_pids(host_pids(str(container.id), keep, parent) or [])
            finally:
                thaw(container)
            return
    with contextlib.suppress(APIError, NotFound):
        container.exec_run(["kill", "-9", "-1"], user=f"{user[0]}:{user[1]}", detach=True)


def thaw(container: Container, attempts: int = 6) -> bool:
    """Unpause ``container``, trying again while the engine refuses (under load the
    freezer's thaw can fail once); False if it stays paused. A container left frozen
    would refuse every later command, the copy-out of transcripts included."""
    for attempt in range(attempts):
        try:
            container.unpause()
            return True
        except NotFound:
            return True
        except APIError as exc:
            if "not paused" in str(exc).lower():
                return True
        time.sleep(0.1 * (attempt + 1))
    return False


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


def own(info: tarfile.TarInfo, owner: tuple[int, int] | None) -> tarfile.TarInfo:
    uid, gid = owner or (0, 0)
    info.uid, info.gid = uid, gid
    info.uname = info.gname = "" if owner else "root"
    return info


def chown_tree(root: Path, owner: tuple[int, int]) -> None:
    """``chown -R`` on the host, without following symlinks."""
    uid, gid = owner
    with contextlib.suppress(OSError):
        os.lchown(root, uid, gid)
    for folder, dirs, files in walk(root):
        for name in dirs + files:
            with contextlib.suppress(OSError):
                os.lchown(os.path.join(folder, name), uid, gid)


def unpack_archive(
    stream: Iterable[bytes], path: str, dest: Path, max_bytes: int | None = None
) -> None:
    """Unpack the engine's archive of ``path`` (file or folder) to ``dest``, spooled to a
    file; ``OverCap`` as soon as it passes ``max_bytes``. Links out and devices stay out."""
    with tempfile.TemporaryDirectory(prefix="harness-copyout-") as tmp:
        archive = Path(tmp) / "out.tar"
        with open(archive, "wb") as handle:
            for chunk in stream:
                handle.write(chunk)
                if max_bytes is not None and handle.tell() > max_bytes:
                    raise OverCap(f"{path} is over the {max_bytes} bytes cap")
        unpacked = Path(tmp) / "x"
        with tarfile.open(archive) as tar:
            tar.extractall(unpacked, filter=data_filter)  # no links out, no devices
        top = unpacked / posixpath.basename(path.rstrip("/") or "/")
        if top.is_dir() and not top.is_symlink():
            shutil.copytree(top, dest, symlinks=True, dirs_exist_ok=True)
        else:
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(top), dest)


class Capture:
    """Two output streams kept up to ``cap`` bytes each; the rest counted and dropped."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.kept = (Capped(cap), Capped(cap))

    @property
    def dropped(self) -> int:
        return sum(kept.dropped for kept in self.kept)

    def add(self, stream: int, chunk: bytes | None) -> None:
        self.kept[stream].add(chunk)

    def text(self, stream: int) -> str:
        kept = self.kept[stream]
        text = kept.text()
        if kept.dropped:
            text += f"\n[harness: output over {self.cap} bytes; the rest was dropped]\n"
        return text


__all__ = [
    "HOME_DIR",
    "Capture",
    "chown_tree",
    "identity_files",
    "kill_processes",
    "limit_watch",
    "own",
    "remove_network",
    "thaw",
    "unpack_archive",
]
