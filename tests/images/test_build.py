"""The image builder: content-addressed tags, warm runs, partial rebuilds, one build.

The rebuild tests use a temporary images folder holding a copy of the real ``base`` (so
it resolves to the already built base tag) and tiny children with a per-test nonce; every
image they build is removed afterwards.
"""

from __future__ import annotations

import contextlib
import secrets
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest
from docker.errors import ImageNotFound

from harness.images import ImageBuilder, ensure_image, images_dir
from tests._docker import client_or_skip
from tests.support.images import write_image

REAL = images_dir()


# -- pure ------------------------------------------------------------------------------


# -- with the engine ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def client() -> docker.DockerClient:
    return client_or_skip()


@pytest.fixture
def scratch(tmp_path: Path, client: docker.DockerClient) -> Iterator[tuple[Path, list[str]]]:
    """A temp images folder with the real base; yields (root, tags to remove at the end)."""
    root = tmp_path / "images"
    shutil.copytree(REAL / "base", root / "base")
    built: list[str] = []
    try:
        yield root, built
    finally:
        for tag in reversed(built):
            with contextlib.suppress(ImageNotFound):
                client.images.remove(tag, force=True)


@pytest.mark.docker
@pytest.mark.integration
def test_warm_run_builds_nothing(client: docker.DockerClient) -> None:
    first = ensure_image("env-python", client=client)
    builder = ImageBuilder(client)
    again = builder.ensure("env-python")
    assert builder.built == []
    assert again == first and again.id.startswith("sha256:")
    assert client.images.get(again.tag).labels["harness.image"] == "env-python"


@pytest.mark.docker
@pytest.mark.integration
def test_edit_rebuilds_only_that_image_and_children(
    client: docker.DockerClient, scratch: tuple[Path, list[str]]
) -> None:
    root, cleanup = scratch
    nonce = secrets.token_hex(4)
    write_image(root, "t-mid", "base", f"RUN echo {nonce} > /mid")
    write_image(root, "t-leaf", "t-mid", "RUN cat /mid > /leaf")
    write_image(root, "t-side", "base", f"RUN echo {nonce} > /side")
    cold = ImageBuilder(client, root=root)
    refs = {n: cold.ensure(n) for n in ("t-leaf", "t-side")}
    cleanup += cold.built
    assert [t.split(":")[0] for t in cold.built] == [
        "harness/t-mid",
        "harness/t-leaf",
        "harness/t-side",
    ]

    warm = ImageBuilder(client, root=root)
    assert {n: warm.ensure(n) for n in ("t-leaf", "t-side")} == refs
    assert warm.built == []

    dockerfile = root / "t-mid" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text() + "RUN echo edited >> /mid\n")
    edited = ImageBuilder(client, root=root)
    after = {n: edited.ensure(n) for n in ("t-leaf", "t-side")}
    cleanup += edited.built
    assert [t.split(":")[0] for t in edited.built] == ["harness/t-mid", "harness/t-leaf"]
    assert after["t-side"] == refs["t-side"] and after["t-leaf"] != refs["t-leaf"]
    assert edited.current_tag("t-leaf") == after["t-leaf"].tag
    out = client.containers.run(after["t-leaf"].tag, ["cat", "/leaf"], remove=True)
    assert out.decode().split() == [nonce, "edited"]


@pytest.mark.docker
@pytest.mark.integration
def test_concurrent_callers_build_once(
    client: docker.DockerClient, scratch: tuple[Path, list[str]]
) -> None:
    root, cleanup = scratch
    write_image(root, "t-conc", "base", f"RUN sleep 2 && echo {secrets.token_hex(4)} > /c")
    builders = [ImageBuilder(client, root=root) for _ in range(2)]
    results: dict[int, str] = {}
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            results[i] = builders[i].ensure("t-conc").tag
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    cleanup += [t for b in builders for t in b.built]
    assert errors == []
    assert results[0] == results[1]
    assert sum(len(b.built) for b in builders) == 1
