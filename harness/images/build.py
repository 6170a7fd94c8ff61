"""Build images on demand, content addressed, at most once across threads and processes.

``ensure_image("scorer")`` makes sure the whole chain (root -> base -> scorer) exists at
its current content tag and returns its ``ImageRef``. A warm call only asks the engine
whether the tags exist. Each name is built under an exclusive ``fcntl`` lock in the
cache folder, and existence is re-checked after the lock is taken, so concurrent callers
build an image once and the others reuse it.
"""

from __future__ import annotations

import fcntl
import re
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from contextlib import contextmanager
from pathlib import Path

import docker
from docker.errors import APIError, DockerException, ImageNotFound

from harness.config.settings import ca_bundle, cache_dir
from harness.errors import InfraError
from harness.images import bootstrap, graph
from harness.images.coldtimes import estimate
from harness.images.graph import ImageDef, ImageRef
from harness.sandbox.engine import docker_client

Progress = Callable[[str], None]
CA_NAME = "harness-ca.crt"


def host_ca_bundle() -> Path | None:
    """First existing CA bundle of $SSL_CERT_FILE, $PIP_CERT, $REQUESTS_CA_BUNDLE, system."""
    return ca_bundle()


@contextmanager
def file_lock(name: str) -> Iterator[None]:
    """Exclusive lock ``<cache>/locks/<name>.lock``, honoured by threads and processes."""
    folder = cache_dir() / "locks"
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"{name}.lock", "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class ImageBuilder:
    """Resolves and builds images of one images folder; records what it built."""

    def __init__(
        self,
        client: docker.DockerClient | None = None,
        *,
        root: Path | None = None,
        progress: Progress | None = None,
        log: Progress | None = None,
    ) -> None:
        self.client = client or docker_client()
        self.root = graph.images_dir(root)
        self.progress = progress or say  # what is built and how far (stderr by default)
        self.log = log or (lambda _msg: None)  # the engine's build output, line by line
        self.built: list[str] = []  # tags built by this builder, in order
        self._mutex = threading.Lock()

    def ensure(self, name: str) -> ImageRef:
        """The image ``name`` at its current tag, building it and its parents if needed."""
        images = graph.chain(name, self.root)
        parent_ref, parent_id = self._ensure_root(images[0].suite)
        ref: ImageRef | None = None
        for image in images:
            ref = self._ensure_one(image, parent_ref, parent_id)
            parent_ref, parent_id = ref.tag, ref.id
        assert ref is not None
        return ref

    def ensure_many(self, names: Sequence[str], jobs: int = 1) -> list[ImageRef]:
        """``ensure`` each name, up to ``jobs`` at once, in order of ``names``.

        Image builds spend most of their time waiting on package downloads, so a few in
        parallel finish a cold set much sooner than one by one. Shared parents are built
        once: the per-name locks make the other threads wait and then reuse them. The
        first failure stops what has not started and is raised.
        """
        if jobs <= 1 or len(names) <= 1:
            return [self.ensure(name) for name in names]
        with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="image") as pool:
            futures = [pool.submit(self.ensure, name) for name in names]
            done, _ = wait(futures, return_when=FIRST_EXCEPTION)
            errors = [e for f in futures if f in done and (e := f.exception()) is not None]
            if errors:
                for future in futures:
                    future.cancel()
                raise errors[0]
        return [future.result() for future in futures]

    def current_tag(self, name: str) -> str | None:
        """The tag ``name`` would have now, without building; None if a parent is missing."""
        images = graph.chain(name, self.root)
        found = bootstrap.find_root(self.client, images[0].suite)
        if not found:
            return None
        parent_id = found[1]
        tag = None
        for image in images:
            tag = f"{image.repository}:{graph.content_hash(image, parent_id)}"
            image_id = self._local_id(tag)
            if image_id is None and image.name != name:
                return None
            parent_id = image_id or ""
        return tag

    def _ensure_root(self, suite: str) -> tuple[str, str]:
        found = bootstrap.find_root(self.client, suite)
        if found:
            return found
        with file_lock("root" if suite == bootstrap.SUITE else f"root-{suite}"):
            return bootstrap.ensure_root(self.client, self.progress, suite)

    def _local_id(self, tag: str) -> str | None:
        try:
            return str(self.client.images.get(tag).id)
        except ImageNotFound:
            return None

    def _ensure_one(self, image: ImageDef, parent_ref: str, parent_id: str) -> ImageRef:
        tag = f"{image.repository}:{graph.content_hash(image, parent_id)}"
        image_id = self._local_id(tag)
        if image_id:
            return ImageRef(image.name, tag, image_id)
        with file_lock(image.name):
            image_id = self._local_id(tag)  # someone else may have built it meanwhile
            if image_id is None:
                image_id = self._build(image, tag, parent_ref)
        return ImageRef(image.name, tag, image_id)

    def _build(self, image: ImageDef, tag: str, parent_ref: str) -> str:
        started = time.monotonic()
        self.progress(
            f"building image {image.name} as {tag} (parent {parent_ref}); once"
            + estimate(image.name)
        )
        with tempfile.TemporaryDirectory(prefix=f"harness-ctx-{image.name}-") as tmp:
            context = Path(tmp) / "ctx"
            shutil.copytree(image.path, context, symlinks=True)
            ca = host_ca_bundle()
            target = context / CA_NAME
            if ca is not None:
                shutil.copyfile(ca, target)
            else:
                target.write_bytes(b"")
            image_id = self._run_build(image, tag, parent_ref, context)
        with self._mutex:
            self.built.append(tag)
        took = time.monotonic() - started
        self.progress(f"built image {image.name} {tag} {image_id[:19]} in {took:.0f} s")
        return image_id

    def _run_build(self, image: ImageDef, tag: str, parent_ref: str, context: Path) -> str:
        labels = {"harness": "1", "harness.image": image.name, "harness.hash": tag.split(":")[-1]}
        tail: list[str] = []
        image_id: str | None = None
        try:
            stream = self.client.api.build(
                path=str(context),
                tag=tag,
                buildargs={"PARENT": parent_ref},
                labels=labels,
                rm=True,
                forcerm=True,
                pull=False,
                decode=True,
            )
            for chunk in stream:
                if "error" in chunk:
                    raise InfraError(
                        f"building {tag} failed: {chunk['error'].strip()} | {' | '.join(tail)}",
                        file=image.path / "Dockerfile",
                        fix=f"fix the Dockerfile, then `harness images build {image.name}`",
                    )
                line = str(chunk.get("stream", "")).rstrip()
                if line:
                    tail = [*tail[-4:], line]
                    self.log(line)
                    step = STEP.match(line)
                    if step:  # "Step 3/12 : RUN ...": how far the build is
                        self.progress(f"  {image.name} step {step[1]}: {step[2][:80]}")
                aux = chunk.get("aux")
                if isinstance(aux, dict) and "ID" in aux:
                    image_id = str(aux["ID"])
        except (APIError, DockerException) as exc:
            raise InfraError(f"building {tag} failed: {exc}", file=image.path) from exc
        return image_id or self._local_id(tag) or _missing(tag)


STEP = re.compile(r"Step (\d+/\d+) : (.*)")


def say(message: str) -> None:
    """Build progress on stderr, one plain line each (no redraws), so a first trial that
    builds images for minutes says what it is doing."""
    sys.stderr.write(f"harness: {message}\n")
    sys.stderr.flush()


def _missing(tag: str) -> str:
    raise InfraError(f"build of {tag} reported success but the image is missing")


def ensure_image(
    name: str,
    *,
    client: docker.DockerClient | None = None,
    progress: Progress | None = None,
    root: Path | None = None,
) -> ImageRef:
    """Make sure image ``name`` (and its parents) exist at their current tags."""
    return ImageBuilder(client, root=root, progress=progress).ensure(name)
