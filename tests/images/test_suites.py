"""A second root of the image graph: an image.yml with ``parent: null`` and ``suite:``
roots its image on that Debian suite (the engine image: forky, where llama.cpp is packaged)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import UserError
from harness.images.bootstrap import SCRIPTS, debootstrap_command, root_refs
from harness.images.graph import chain, load

pytestmark = pytest.mark.unit
REAL = Path(__file__).resolve().parents[2] / "images"


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


def test_a_suite_debootstrap_has_no_script_for_uses_sids(tmp_path: Path) -> None:
    cmd = debootstrap_command("forky", tmp_path, "http://mirror.invalid/debian")
    assert cmd[:5] == ["debootstrap", "--variant=minbase", "forky", str(tmp_path), cmd[4]]
    if not (SCRIPTS / "forky").exists():
        assert cmd[-1] == str(SCRIPTS / "sid")
    if (SCRIPTS / "bookworm").exists():
        plain = debootstrap_command("bookworm", tmp_path, "http://mirror.invalid/debian")
        assert plain[-1] == "http://mirror.invalid/debian"
