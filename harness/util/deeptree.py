"""Walking and removing trees an agent (or the code under test) made, at any depth.

``os.walk`` and ``shutil.rmtree`` recurse in Python: a folder nested 1,200 deep raises
``RecursionError`` (which ``ignore_errors`` does not catch), so a verifier's cleanup
crashed into ``error`` and left its staging folder, the run's seed in it, behind. Here
both are loops: ``remove_tree`` descends with directory descriptors (never a path
longer than a name, so a tree deeper than ``PATH_MAX`` goes too; never following a
link) and holds one descriptor at a time; ``walk`` keeps its own stack and stops
listing past ``max_entries``.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def _subdir(fd: int) -> str | None:
    """Remove every non-folder entry of the open folder ``fd``; the name of a subfolder
    left (None when it is empty)."""
    found = None
    with os.scandir(fd) as entries:
        for entry in entries:
            try:
                is_dir = stat.S_ISDIR(entry.stat(follow_symlinks=False).st_mode)
            except OSError:
                continue
            if is_dir:
                found = found or entry.name
                continue
            with contextlib.suppress(FileNotFoundError):
                os.unlink(entry.name, dir_fd=fd)
    return found


def _open_dir(name: str, parent: int) -> int:
    try:
        return os.open(name, DIR_FLAGS, dir_fd=parent)
    except PermissionError:  # a folder the agent made unreadable: ours to open again
        os.chmod(name, 0o700, dir_fd=parent)
        return os.open(name, DIR_FLAGS, dir_fd=parent)


def remove_tree(path: Path | str) -> None:
    """``rm -rf path`` without recursion; never raises (what cannot go stays)."""
    path = Path(path)
    try:
        info = path.lstat()
    except OSError:
        return
    if not stat.S_ISDIR(info.st_mode):
        with contextlib.suppress(OSError):
            path.unlink()
        return
    with contextlib.suppress(OSError):
        _remove_dir(path)


def _remove_dir(path: Path) -> None:
    parent = os.open(str(path.parent), DIR_FLAGS & ~os.O_NOFOLLOW)
    try:
        fd = _open_dir(path.name, parent)
    finally:
        os.close(parent)
    names: list[str] = []  # the folders below ``path`` that ``fd`` is in
    try:
        while True:
            sub = _subdir(fd)
            if sub is not None:
                child = _open_dir(sub, fd)
                os.close(fd)
                fd = child
                names.append(sub)
                continue
            up = os.open("..", DIR_FLAGS & ~os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = up
            if not names:
                os.rmdir(path.name, dir_fd=fd)
                return
            os.rmdir(names.pop(), dir_fd=fd)
    finally:
        os.close(fd)


def walk(
    root: Any, *, max_entries: int | None = None
) -> Iterator[tuple[Any, list[Any], list[Any]]]:
    """``os.walk(root)`` (top-down, links not followed, ``dirs`` prunable) as a loop;
    unreadable folders are skipped, and listing stops after ``max_entries`` entries."""
    stack = [root if isinstance(root, bytes) else os.fspath(root)]
    seen = 0
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        dirs: list[Any] = []
        files: list[Any] = []
        for entry in entries:
            try:
                (dirs if entry.is_dir(follow_symlinks=False) else files).append(entry.name)
            except OSError:
                files.append(entry.name)
        seen += len(entries)
        yield folder, dirs, files
        if max_entries is not None and seen >= max_entries:
            return
        stack += [os.path.join(folder, d) for d in reversed(dirs)]
