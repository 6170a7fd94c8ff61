"""The root image: ``debian:bookworm`` when a registry serves it, else a debootstrapped one.

Machines without a container registry cannot ``docker pull``. There the root is built
with ``debootstrap --variant=minbase bookworm`` from the host's own apt mirror (read from
its apt sources at run time, never written into code) and ``docker import``-ed as
``harness/bootstrap:bookworm``. The pull is tried once; a failure is remembered in the
cache folder so later runs go straight to the bootstrap.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import docker
from docker.errors import APIError, DockerException, ImageNotFound

from harness.config.settings import Settings, cache_dir
from harness.errors import InfraError

PULL_IMAGE = "debian:bookworm"
BOOTSTRAP_REPO = "harness/bootstrap"
BOOTSTRAP_TAG = "bookworm"
BOOTSTRAP_IMAGE = f"{BOOTSTRAP_REPO}:{BOOTSTRAP_TAG}"
SUITE = "bookworm"

Progress = Callable[[str], None]


def _local_id(client: docker.DockerClient, ref: str) -> str | None:
    try:
        return str(client.images.get(ref).id)
    except ImageNotFound:
        return None


def find_root(client: docker.DockerClient) -> tuple[str, str] | None:
    """(reference, id) of a root image already present locally, or None."""
    for ref in (PULL_IMAGE, BOOTSTRAP_IMAGE):
        image_id = _local_id(client, ref)
        if image_id:
            return ref, image_id
    return None


def ensure_root(client: docker.DockerClient, progress: Progress | None = None) -> tuple[str, str]:
    """(reference, id) of the root image, pulling or bootstrapping it when absent."""
    say = progress or (lambda _msg: None)
    found = find_root(client)
    if found:
        return found
    marker = cache_dir() / "registry-unreachable"
    route = Settings.from_env().base_route
    if route != "bootstrap" and not marker.exists():
        say(f"trying to pull {PULL_IMAGE}")
        try:
            client.images.pull(PULL_IMAGE)
            image_id = _local_id(client, PULL_IMAGE)
            if image_id:
                return PULL_IMAGE, image_id
        except (APIError, DockerException) as exc:
            say(f"pull failed ({str(exc)[:120]}); bootstrapping instead")
            marker.write_text(f"{time.time():.0f} {exc}\n")
    return BOOTSTRAP_IMAGE, bootstrap(client, say)


def host_mirror(paths: list[Path] | None = None) -> str:
    """The Debian mirror URI this host's apt uses for the plain ``bookworm`` suite."""
    if paths is None:
        paths = [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*"))]
    candidates: list[str] = []
    for path in paths:
        if not path.is_file():
            continue
        text = path.read_text(errors="replace")
        if path.suffix == ".sources":
            candidates += _deb822_uris(text)
        else:
            candidates += _one_line_uris(text)
    if not candidates:
        raise InfraError(
            "no Debian bookworm mirror found in the host's apt sources",
            file="/etc/apt/sources.list.d",
            fix="add a bookworm source to /etc/apt, or make debian:bookworm pullable",
        )
    return candidates[0]


def _deb822_uris(text: str) -> list[str]:
    out: list[str] = []
    for stanza in re.split(r"\n\s*\n", text):
        fields: dict[str, str] = {}
        for line in stanza.splitlines():
            if line.startswith("#") or ":" not in line:
                continue
            key, _, value = line.partition(":")
            fields[key.strip().lower()] = value.strip()
        if "deb" in fields.get("types", "").split() and SUITE in fields.get("suites", "").split():
            out += fields.get("uris", "").split()[:1]
    return out


def _one_line_uris(text: str) -> list[str]:
    out: list[str] = []
    for line in text.splitlines():
        words = re.sub(r"\[[^\]]*\]", "", line.split("#", 1)[0]).split()
        if len(words) >= 3 and words[0] == "deb" and words[2] == SUITE:
            out.append(words[1])
    return out


def bootstrap(client: docker.DockerClient, say: Progress) -> str:
    """debootstrap a minbase bookworm rootfs and import it; returns the image id."""
    if shutil.which("debootstrap") is None:
        raise InfraError(
            "debootstrap is not installed and debian:bookworm cannot be pulled",
            fix="apt-get install -y debootstrap",
        )
    if os.geteuid() != 0:
        raise InfraError(
            "building the base rootfs with debootstrap needs root",
            fix="run `harness images build base` as root once",
        )
    mirror = host_mirror()
    say(f"debootstrap {SUITE} from the host's apt mirror")
    with tempfile.TemporaryDirectory(prefix="harness-rootfs-", dir="/var/tmp") as tmp:
        rootfs = Path(tmp) / "rootfs"
        tarball = Path(tmp) / "rootfs.tar"
        cmd = ["debootstrap", "--variant=minbase", SUITE, str(rootfs), mirror]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            lines = done.stderr.strip().splitlines() or done.stdout.splitlines()
            tail = " | ".join(lines[-3:])
            raise InfraError(f"debootstrap failed: {tail}", fix="check the apt mirror is reachable")
        for junk in ("var/cache/apt/archives", "var/lib/apt/lists"):
            for item in (rootfs / junk).glob("*"):
                if item.is_file():
                    item.unlink()
        subprocess.run(["tar", "-C", str(rootfs), "-cf", str(tarball), "."], check=True)
        say(f"importing rootfs as {BOOTSTRAP_IMAGE}")
        try:
            client.api.import_image_from_file(
                str(tarball),
                repository=BOOTSTRAP_REPO,
                tag=BOOTSTRAP_TAG,
                changes=['CMD ["/bin/bash"]', "LABEL harness=1 harness.image=bootstrap"],
            )
        except (APIError, DockerException) as exc:
            raise InfraError(f"docker import of the rootfs failed: {exc}") from exc
    image_id = _local_id(client, BOOTSTRAP_IMAGE)
    if not image_id:
        raise InfraError(f"{BOOTSTRAP_IMAGE} missing right after import")
    return image_id
