"""The root images: ``debian:<suite>`` when a registry serves it, else a debootstrapped one.

Machines without a container registry cannot ``docker pull``. There a root is built with
``debootstrap --variant=minbase <suite>`` from the host's own apt mirror (read from its
apt sources at run time, never written into code) and ``docker import``-ed as
``harness/bootstrap:<suite>``. The pull is tried once; a failure is remembered in the
cache folder so later runs go straight to the bootstrap.

Most images descend from ``bookworm`` (the default suite). An image folder whose
``image.yml`` says ``parent: null`` and ``suite: forky`` roots a second tree on Debian's
testing suite (the engine image: llama.cpp is packaged there). debootstrap has no script
for a suite newer than it knows, so such a suite is bootstrapped with the ``sid`` script.
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

SUITE = "bookworm"  # the default root, and the suite whose mirror the host's apt names
PULL_IMAGE = f"debian:{SUITE}"
BOOTSTRAP_REPO = "harness/bootstrap"
BOOTSTRAP_TAG = SUITE
BOOTSTRAP_IMAGE = f"{BOOTSTRAP_REPO}:{BOOTSTRAP_TAG}"
SUITES = ("bookworm", "trixie", "forky", "sid")  # the roots an image.yml may name
SCRIPTS = Path("/usr/share/debootstrap/scripts")

Progress = Callable[[str], None]


def _local_id(client: docker.DockerClient, ref: str) -> str | None:
    try:
        return str(client.images.get(ref).id)
    except ImageNotFound:
        return None


def root_refs(suite: str = SUITE) -> tuple[str, str]:
    """(pulled reference, bootstrapped reference) of the root image of ``suite``."""
    return f"debian:{suite}", f"{BOOTSTRAP_REPO}:{suite}"


def find_root(client: docker.DockerClient, suite: str = SUITE) -> tuple[str, str] | None:
    """(reference, id) of a root image of ``suite`` already present locally, or None."""
    for ref in root_refs(suite):
        image_id = _local_id(client, ref)
        if image_id:
            return ref, image_id
    return None


def ensure_root(
    client: docker.DockerClient, progress: Progress | None = None, suite: str = SUITE
) -> tuple[str, str]:
    """(reference, id) of the root image of ``suite``, pulling or bootstrapping it when absent."""
    say = progress or (lambda _msg: None)
    found = find_root(client, suite)
    if found:
        return found
    pulled, bootstrapped = root_refs(suite)
    marker = cache_dir() / "registry-unreachable"
    route = Settings.from_env().base_route
    if route != "bootstrap" and not marker.exists():
        say(f"trying to pull {pulled}")
        try:
            client.images.pull(pulled)
            image_id = _local_id(client, pulled)
            if image_id:
                return pulled, image_id
        except (APIError, DockerException) as exc:
            say(f"pull failed ({str(exc)[:120]}); bootstrapping instead")
            marker.write_text(f"{time.time():.0f} {exc}\n")
    return bootstrapped, bootstrap(client, say, suite)


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


def debootstrap_command(suite: str, rootfs: Path, mirror: str) -> list[str]:
    """The debootstrap call for ``suite``: a suite it has no script for uses ``sid``'s."""
    cmd = ["debootstrap", "--variant=minbase", suite, str(rootfs), mirror]
    if not (SCRIPTS / suite).exists():
        cmd.append(str(SCRIPTS / "sid"))
    return cmd


def bootstrap(client: docker.DockerClient, say: Progress, suite: str = SUITE) -> str:
    """debootstrap a minbase rootfs of ``suite`` and import it; returns the image id."""
    repo_tag = f"{BOOTSTRAP_REPO}:{suite}"
    if shutil.which("debootstrap") is None:
        raise InfraError(
            f"debootstrap is not installed and debian:{suite} cannot be pulled",
            fix="apt-get install -y debootstrap",
        )
    if os.geteuid() != 0:
        raise InfraError(
            "building the base rootfs with debootstrap needs root",
            fix="run `harness images build base` as root once",
        )
    mirror = host_mirror()
    say(f"debootstrap {suite} from the host's apt mirror")
    with tempfile.TemporaryDirectory(prefix="harness-rootfs-", dir="/var/tmp") as tmp:
        rootfs = Path(tmp) / "rootfs"
        tarball = Path(tmp) / "rootfs.tar"
        cmd = debootstrap_command(suite, rootfs, mirror)
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
        say(f"importing rootfs as {repo_tag}")
        try:
            client.api.import_image_from_file(
                str(tarball),
                repository=BOOTSTRAP_REPO,
                tag=suite,
                changes=['CMD ["/bin/bash"]', "LABEL harness=1 harness.image=bootstrap"],
            )
        except (APIError, DockerException) as exc:
            raise InfraError(f"docker import of the rootfs failed: {exc}") from exc
    image_id = _local_id(client, repo_tag)
    if not image_id:
        raise InfraError(f"{repo_tag} missing right after import")
    return image_id
