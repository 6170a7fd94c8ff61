"""Copying what an agent made as data: links kept only inside the tree, pipes left out and
named, sparse holes kept, caps checked first; a results folder scrubbed; paths checked for
links on the way; tar members filtered, not failed on."""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

import pytest

from harness.util.agentfiles import (
    OverCap,
    check_caps,
    copy_tree,
    data_filter,
    link_inside,
    real_path,
    scrub_tree,
)

pytestmark = pytest.mark.unit


def _tree(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "a.py").write_text("a = 1\n")
    (root / "run.sh").write_text("#!/bin/sh\n")
    (root / "run.sh").chmod(0o755)
    (root / "pkg" / "inside").symlink_to("a.py")
    (root / "out").symlink_to("/etc/passwd")
    (root / "up").symlink_to("../elsewhere")
    os.mkfifo(root / "pipe")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n")
    return root


def test_a_tree_is_copied_as_data(tmp_path: Path) -> None:
    src = _tree(tmp_path / "src")
    with open(src / "sparse.bin", "wb") as fh:
        fh.truncate(8 * 1024 * 1024)
        fh.write(b"head")
    dest = tmp_path / "dest"
    done = copy_tree(src, dest, skip_top=frozenset({".git"}))
    assert done.skipped == {
        "out": "a link out of the tree, not copied",
        "up": "a link out of the tree, not copied",
        "pipe": "a named pipe, not copied",
    }
    assert os.readlink(dest / "pkg" / "inside") == "a.py"
    assert (dest / "pkg" / "a.py").read_text() == "a = 1\n" and os.access(dest / "run.sh", os.X_OK)
    assert not (dest / ".git").exists()
    sparse = os.stat(dest / "sparse.bin")
    assert sparse.st_size == 8 * 1024 * 1024 and sparse.st_blocks * 512 < 1024 * 1024


def test_caps_are_checked_before_anything_is_copied(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "big").write_bytes(b"x" * 3 * 1024 * 1024)
    assert check_caps(src, None, skip_top=frozenset()).apparent == 3 * 1024 * 1024
    with pytest.raises(OverCap, match=r"3 MiB \(apparent size\), over its 2 MiB cap"):
        copy_tree(src, tmp_path / "dest", max_bytes=2 * 1024 * 1024)
    assert not (tmp_path / "dest").exists()
    assert check_caps(src, 2 * 1024 * 1024, skip_top=frozenset({"big"})).apparent == 0


def test_links_inside_and_out() -> None:
    assert link_inside("/r", "/r/a", "b/c") and link_inside("/r", "/r/a", "..")
    assert not link_inside("/r", "/r/a", "../..") and not link_inside("/r", "/r", "/r/x")
    assert not link_inside("/r", "/r", "../rx")  # a sibling sharing the prefix


def test_a_results_folder_is_scrubbed_in_place(tmp_path: Path) -> None:
    root = _tree(tmp_path / "run")
    removed = scrub_tree(root)
    assert removed == {
        "out": "a link out of the tree, removed",
        "up": "a link out of the tree, removed",
        "pipe": "a named pipe, removed",
    }
    assert (root / "pkg" / "inside").is_symlink() and (root / "pkg" / "a.py").is_file()


def test_a_path_with_a_link_on_the_way_is_not_real(tmp_path: Path) -> None:
    (tmp_path / ".git" / "harness").mkdir(parents=True)
    assert real_path(tmp_path, ".git/harness/state.json")  # not there yet: fine
    (tmp_path / ".git" / "harness" / "state.json").write_text("{}")
    assert real_path(tmp_path, ".git/harness/state.json")
    (tmp_path / ".git" / "harness" / "state.json").unlink()
    (tmp_path / ".git" / "harness" / "state.json").symlink_to("/tmp/x")
    assert not real_path(tmp_path, ".git/harness/state.json")
    (tmp_path / "d").symlink_to(tmp_path / ".git")
    assert not real_path(tmp_path, "d/harness/new.json")
    (tmp_path / "f").write_text("")
    assert not real_path(tmp_path, "f/below")  # a file where a folder should be


def test_tar_members_refused_by_the_data_filter_are_skipped(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        members = [
            ("ok.txt", tarfile.REGTYPE, ""),
            ("esc", tarfile.SYMTYPE, "../../x"),
            ("dev", tarfile.CHRTYPE, ""),
            ("/abs", tarfile.REGTYPE, ""),
        ]
        for name, kind, target in members:
            info = tarfile.TarInfo(name)
            info.type, info.linkname = kind, target
            tar.addfile(info, io.BytesIO(b"") if kind == tarfile.REGTYPE else None)
    buf.seek(0)
    with tarfile.open(fileobj=buf) as tar:
        kept = [data_filter(m, str(tmp_path)) for m in tar.getmembers()]
    assert [m.name for m in kept if m is not None] == ["ok.txt", "abs"]  # made relative
