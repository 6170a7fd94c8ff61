"""The seed cache: the standard library built by the toolchain alone, read-only to others."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from harness.verify.go import seed as goseed

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("go") is None, reason="needs go"),
]


def _env() -> dict[str, str]:
    return {"PATH": os.environ["PATH"], "CGO_ENABLED": "0", "GOFLAGS": "-buildvcs=false"}


def test_the_key_follows_the_build_settings() -> None:
    env = _env()
    first = goseed.key(env)
    assert first is not None and first.startswith("go1.") and goseed.key(env) == first
    assert goseed.key({**env, "CGO_ENABLED": "1"}) != first
    assert goseed.key({"PATH": "/nonexistent"}) is None


def test_a_seed_is_built_once_and_nobody_else_may_write_it(tmp_path: Path) -> None:
    old = os.umask(0)  # a careless caller's umask changes nothing
    try:
        seed = goseed.build(tmp_path / "seeds", _env())
    finally:
        os.umask(old)
    assert seed is not None and (seed / "README").is_file()
    assert goseed.find(tmp_path / "seeds", _env()) == seed
    assert [p.name for p in (tmp_path / "seeds").iterdir()] == [seed.name]  # no leftovers
    for folder, dirs, files in os.walk(seed):
        for name in [*dirs, *files]:
            mode = (Path(folder) / name).lstat().st_mode
            assert not mode & (stat.S_IWGRP | stat.S_IWOTH), f"{folder}/{name}"
    assert goseed.build(tmp_path / "seeds", _env()) == seed  # found, not built again


def test_no_seed_where_it_cannot_be_written(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    assert goseed.build(tmp_path / "file" / "seeds", _env()) is None
    assert goseed.find(tmp_path / "none", _env()) is None
