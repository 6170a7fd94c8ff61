"""Trees at any depth: removal and walks as loops, caps on deep workspaces (real files)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.util.agentfiles import MAX_DEPTH, OverCap, check_caps
from harness.util.deeptree import remove_tree, walk

pytestmark = pytest.mark.unit


@pytest.fixture(autouse=True)
def _removed(tmp_path: Path) -> Iterator[None]:
    """pytest's own cleanup recurses: the deep trees go here."""
    yield
    for child in tmp_path.iterdir():
        remove_tree(child)


def nest(root: Path, depth: int, name: str = "d") -> None:
    """``depth`` folders below ``root`` by relative steps (past PATH_MAX if need be)."""
    fd = os.open(root, os.O_RDONLY)
    try:
        for _ in range(depth):
            os.mkdir(name, dir_fd=fd)
            os.close(os.open("f", os.O_CREAT | os.O_WRONLY, dir_fd=fd))
            child = os.open(name, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = child
    finally:
        os.close(fd)


def test_a_tree_deeper_than_recursion_and_path_max_is_removed(tmp_path: Path) -> None:
    root = tmp_path / "deep"
    root.mkdir()
    nest(root, 2500, "dd")  # 2500 * 3 bytes: past PATH_MAX for a full path
    with pytest.raises(RecursionError):
        shutil.rmtree(root, ignore_errors=True)  # what the harness used: it raises
    remove_tree(root)
    assert not root.exists()
    remove_tree(root)  # gone already: no error


def test_an_unreadable_folder_and_a_link_out(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("x")
    root = tmp_path / "t"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "link").symlink_to(outside)
    (root / "a" / "b").chmod(0)
    remove_tree(root)
    assert not root.exists() and (outside / "keep").is_file()  # never followed


def test_walk_is_a_loop_and_prunes(tmp_path: Path) -> None:
    nest(tmp_path, 1200)
    folders = [f for f, _, _ in walk(tmp_path)]
    assert len(folders) == 1201
    pruned = []
    for folder, dirs, _ in walk(tmp_path):
        pruned.append(folder)
        dirs.clear()
    assert pruned == [str(tmp_path)]
    assert len(list(walk(tmp_path, max_entries=10))) < 10


def test_a_workspace_nested_too_deep_is_refused(tmp_path: Path) -> None:
    nest(tmp_path, MAX_DEPTH + 2)
    with pytest.raises(OverCap, match="deep"):
        check_caps(tmp_path, None, skip_top=frozenset())
