"""The image graph: content-addressed hashes, parents and cycles, roots and their Debian suites."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import UserError
from harness.images import images_dir
from harness.images.bootstrap import root_refs
from harness.images.graph import chain, content_hash, load
from tests.support.images import write_image

pytestmark = pytest.mark.unit

REAL = images_dir()


def test_hash_follows_content_and_parent(tmp_path: Path) -> None:
    write_image(tmp_path, "a", "base", "RUN true")
    image = load("a", tmp_path)
    first = content_hash(image, "sha256:1")
    assert len(first) == 12 and first == content_hash(image, "sha256:1")
    assert content_hash(image, "sha256:2") != first
    (tmp_path / "a" / "extra.txt").write_text("x")
    assert content_hash(image, "sha256:1") != first


def test_graph_rejects_unknown_names_and_cycles(tmp_path: Path) -> None:
    write_image(tmp_path, "a", "b", "RUN true")
    write_image(tmp_path, "b", "a", "RUN true")
    with pytest.raises(UserError, match="cycle"):
        chain("a", tmp_path)
    with pytest.raises(UserError, match="unknown image"):
        load("nope", tmp_path)
    assert [i.name for i in chain("scorer", REAL)] == ["base", "scorer"]
    assert load("base", REAL).parent is None


def _image(root: Path, name: str, meta: str) -> None:
    (root / name).mkdir()
    (root / name / "Dockerfile").write_text("ARG PARENT\nFROM ${PARENT}\n")
    (root / name / "image.yml").write_text(meta)


def test_the_engine_image_roots_on_forky_and_the_rest_on_bookworm() -> None:
    engine = chain("engine", REAL)
    assert [i.name for i in engine] == ["engine"]
    assert engine[0].parent is None and engine[0].suite == "forky"
    assert chain("scorer", REAL)[0].suite == "bookworm"
    assert root_refs("forky") == ("debian:forky", "harness/bootstrap:forky")


def test_a_suite_is_only_for_a_root_and_only_a_known_one(tmp_path: Path) -> None:
    _image(tmp_path, "base", "parent: null\n")
    _image(tmp_path, "odd", "parent: base\nsuite: forky\n")
    _image(tmp_path, "nowhere", "parent: null\nsuite: hamm2\n")
    _image(tmp_path, "ok", "parent: null\nsuite: trixie\n")
    with pytest.raises(UserError, match="suite") as err:
        load("odd", tmp_path)
    assert err.value.field == "suite"
    with pytest.raises(UserError, match="hamm2"):
        load("nowhere", tmp_path)
    assert load("ok", tmp_path).suite == "trixie"
