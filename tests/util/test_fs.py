"""File helpers: atomic writes leave no temp file, text read like text mode, copy steps'
destinations (never outside the workspace), links on the way, folders made and removed."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from harness.util.fs import (
    copy_destinations,
    hidden_paths,
    link_on_the_way,
    make_dirs,
    read_json,
    read_text_file,
    remove_empty_dirs,
    sha256_file,
    stat_signature,
    write_atomic,
    write_json,
)

pytestmark = pytest.mark.unit


def test_an_atomic_write_replaces_whole_and_leaves_no_temp_file(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "r.json"
    write_json(path, {"a": Path("/x")})
    assert read_json(path) == {"a": "/x"}
    write_atomic(path, b"new", durable=False)
    assert path.read_bytes() == b"new" and os.listdir(path.parent) == ["r.json"]

    class Boom(str):
        def encode(self, *args: object) -> bytes:
            raise RuntimeError("no")

    with pytest.raises(RuntimeError):
        write_atomic(path, Boom("x"))
    assert path.read_bytes() == b"new" and os.listdir(path.parent) == ["r.json"]


def test_text_files_read_like_text_mode_and_a_non_file_is_none(tmp_path: Path) -> None:
    f = tmp_path / "t.txt"
    f.write_bytes(b"a\r\nb\rc\xff\n")
    assert read_text_file(str(f)) == "a\nb\nc\ufffd\n"
    assert read_text_file(str(tmp_path)) is None and read_text_file(str(tmp_path / "no")) is None
    assert read_text_file(str(f / "below")) is None  # ENOTDIR
    assert read_text_file("nul\0byte") is None
    sig = stat_signature(str(f))
    assert sig != "-" and stat_signature(str(tmp_path / "no")) == "-"
    f.write_bytes(b"longer text")
    assert stat_signature(str(f)) != sig
    assert sha256_file(f) == hashlib.sha256(b"longer text").hexdigest()


def test_copy_destinations(tmp_path: Path) -> None:
    src, ws = tmp_path / "src", tmp_path / "ws"
    (src / "d" / "sub").mkdir(parents=True)
    ws.mkdir()
    (src / "d" / "a.py").write_text("")
    (src / "d" / "sub" / "b.py").write_text("")
    (src / "one.py").write_text("")
    real = ws.resolve()
    assert copy_destinations(src / "d", "pkg", ws) == [
        (src / "d" / "a.py", real / "pkg" / "a.py"),
        (src / "d" / "sub" / "b.py", real / "pkg" / "sub" / "b.py"),
    ]
    assert copy_destinations(src / "one.py", "tests/renamed.py", ws) == [
        (src / "one.py", real / "tests" / "renamed.py")
    ]
    assert copy_destinations(src / "one.py", "tests", ws) == [
        (src / "one.py", real / "tests" / "one.py")
    ]
    with pytest.raises(ValueError, match="outside the workspace"):
        copy_destinations(src / "one.py", "../escape", ws)


def test_a_link_on_the_way_is_found(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "out").mkdir()
    (tmp_path / "a" / "link").symlink_to(tmp_path / "out")
    assert link_on_the_way(tmp_path, tmp_path / "a" / "link" / "x.py") == tmp_path / "a" / "link"
    assert link_on_the_way(tmp_path, tmp_path / "a" / "b" / "x.py") is None
    assert link_on_the_way(tmp_path, tmp_path / "new" / "link" / "x") is None


def test_made_folders_are_removed_again_only_while_empty(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    created = make_dirs(tmp_path / "a" / "b" / "c")
    assert created == [tmp_path / "a" / "b", tmp_path / "a" / "b" / "c"]
    (tmp_path / "a" / "b" / "keep.txt").write_text("someone else's")
    remove_empty_dirs(created)
    assert not (tmp_path / "a" / "b" / "c").exists() and (tmp_path / "a" / "b").is_dir()
    remove_empty_dirs(make_dirs(tmp_path / "x" / "y" / "z"))  # innermost first: all of them
    assert not (tmp_path / "x").exists()


def test_hidden_paths_list_files_of_folders_and_files(tmp_path: Path) -> None:
    (tmp_path / "hidden" / "sub").mkdir(parents=True)
    (tmp_path / "hidden" / "sub" / "t.py").write_text("")
    (tmp_path / "hidden" / "a.py").write_text("")
    (tmp_path / "one.py").write_text("")
    assert hidden_paths(tmp_path, ["hidden", "one.py", "missing"]) == [
        (tmp_path / "hidden" / "a.py", "hidden/a.py"),
        (tmp_path / "hidden" / "sub" / "t.py", "hidden/sub/t.py"),
        (tmp_path / "one.py", "one.py"),
    ]
