"""Copying files an agent (or the code under test) made, without being steered by them.

Agent output is data: a link is copied as a link only when it stays inside its tree
(never followed), a named pipe, socket or device is left out and named, a file whose
name is not UTF-8 is copied like any other, and sizes are counted as files claim them
(apparent size: a sparse 2 GiB file costs 2 GiB of the cap). Holes cost nothing on
the agent's disk but a copy into the verifier's tmpfs (a tar stream) writes them in
full, so a tree whose holes (apparent minus allocated bytes) pass ``MAX_HOLES`` is
refused too, in every sandbox alike. A tree over its caps is refused before anything
is copied (``OverCap``), which is the agent's failure.
"""

from __future__ import annotations

import errno
import os
import stat
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

MAX_FILES = 200_000  # entries in one tree (files, folders, links)
MAX_DEPTH = 256  # folders nested in one tree (a deeper one breaks walkers, paths, tools)
MAX_HOLES = 256 * 1024 * 1024  # bytes of sparse holes in one tree (apparent - allocated)


class OverCap(Exception):
    """The tree is over a cap (size or file count): the agent's failure, not the host's."""


@dataclass
class Copied:
    """What a copy left out (path -> why), and what the tree held."""

    skipped: dict[str, str] = field(default_factory=dict)
    files: int = 0
    apparent: int = 0
    holes: int = 0  # apparent bytes no block backs (sparse files)
    depth: int = 0  # the deepest folder's nesting below the root


def shown(path: str) -> str:
    """A relative path as text for reports (non-UTF-8 bytes as ``\\xNN``)."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def _kind(mode: int) -> str | None:
    if stat.S_ISFIFO(mode):
        return "a named pipe, not copied"
    if stat.S_ISSOCK(mode):
        return "a socket, not copied"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device, not copied"
    return None


def link_inside(root: str, link_dir: str, target: str) -> bool:
    """Whether a link in ``link_dir`` pointing at ``target`` stays inside ``root``
    (lexically: absolute targets never do; the copy never resolves links)."""
    if os.path.isabs(target):
        return False
    full = os.path.normpath(os.path.join(link_dir, target))
    return full == root or full.startswith(root.rstrip("/") + "/")


def scan(root: Path, *, skip_top: frozenset[str] = frozenset()) -> Copied:
    """Count the entries, apparent bytes and nesting below ``root`` (links not followed);
    it stops counting once over ``MAX_FILES`` entries or ``MAX_DEPTH`` folders deep."""
    seen = Copied()
    stack = [(str(root), 0)]
    while stack:
        folder, depth = stack.pop()
        seen.depth = max(seen.depth, depth)
        if seen.files > MAX_FILES or depth > MAX_DEPTH:
            break
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if folder == str(root) and entry.name in skip_top:
                continue
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            seen.files += 1
            if stat.S_ISDIR(info.st_mode):
                stack.append((entry.path, depth + 1))
            elif stat.S_ISREG(info.st_mode):
                seen.apparent += info.st_size
                seen.holes += max(0, info.st_size - info.st_blocks * 512)
    return seen


def check_caps(root: Path, max_bytes: int | None, *, skip_top: frozenset[str]) -> Copied:
    """``scan`` and raise ``OverCap`` when the tree is over ``max_bytes`` or MAX_FILES."""
    seen = scan(root, skip_top=skip_top)
    if seen.files > MAX_FILES:
        raise OverCap(f"the workspace holds over {MAX_FILES} entries (files, folders, links)")
    if seen.depth > MAX_DEPTH:
        raise OverCap(f"the workspace nests folders over {MAX_DEPTH} deep")
    if max_bytes is not None and seen.apparent > max_bytes:
        raise OverCap(
            f"the workspace holds {seen.apparent / 1024**2:.0f} MiB (apparent size), "
            f"over its {max_bytes / 1024**2:.0f} MiB cap"
        )
    if max_bytes is not None and seen.holes > MAX_HOLES:  # a workspace's copy
        raise OverCap(
            f"the workspace holds sparse files with {seen.holes / 1024**2:.0f} MiB of holes, "
            f"over the {MAX_HOLES / 1024**2:.0f} MiB cap (a copy would write them in full)"
        )
    return seen


def copy_tree(
    src: Path,
    dest: Path,
    *,
    max_bytes: int | None = None,
    skip_top: frozenset[str] = frozenset(),
) -> Copied:
    """Copy ``src`` to ``dest`` as data (see the module docstring); ``skip_top`` names
    entries of the top folder never copied (``.git``). Raises ``OverCap`` first."""
    done = check_caps(src, max_bytes, skip_top=skip_top)
    root = os.path.normpath(str(src))
    dest.mkdir(parents=True, exist_ok=True)
    stack = [(root, str(dest))]
    while stack:
        folder, out = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            done.skipped[shown(os.path.relpath(folder, root))] = f"unreadable ({exc.strerror})"
            continue
        for entry in entries:
            if folder == root and entry.name in skip_top:
                continue
            rel = os.path.relpath(entry.path, root)
            target = os.path.join(out, entry.name)
            why = _copy_one(root, entry, target, stack)
            if why:
                done.skipped[shown(rel)] = why
    return done


def _copy_one(
    root: str, entry: os.DirEntry[str], target: str, stack: list[tuple[str, str]]
) -> str | None:
    """Copy one entry; returns why it was left out (None: copied)."""
    try:
        info = entry.stat(follow_symlinks=False)
        mode = info.st_mode
        if stat.S_ISLNK(mode):
            link = os.readlink(entry.path)
            if not link_inside(root, os.path.dirname(entry.path), link):
                return "a link out of the tree, not copied"
            os.symlink(link, target)
        elif stat.S_ISDIR(mode):
            os.mkdir(target, 0o700)
            os.chmod(target, stat.S_IMODE(mode) & 0o777 | 0o700)
            stack.append((entry.path, target))
        elif stat.S_ISREG(mode):
            copy_file(entry.path, target, info.st_size)
            os.chmod(target, stat.S_IMODE(mode) & 0o777)
        else:
            return _kind(mode) or "an unknown kind of file, not copied"
    except OSError as exc:
        return f"not copied ({exc.strerror or type(exc).__name__})"
    return None


def copy_file(src: str, dest: str, size: int) -> None:
    """Copy one regular file (never through a link), keeping its holes: a sparse file
    costs the copy what it holds on disk, not what it claims."""
    fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as fin, open(dest, "xb") as fout:
        offset = 0
        while offset < size:
            try:
                start = os.lseek(fd, offset, os.SEEK_DATA)
                end = os.lseek(fd, start, os.SEEK_HOLE)
            except OSError as exc:
                if exc.errno == errno.ENXIO:  # nothing but a hole from offset on
                    break
                start, end = offset, size  # no hole support here: copy the rest
            if start >= size:
                break
            fin.seek(start)
            fout.seek(start)
            left = end - start
            while left > 0:
                chunk = fin.read(min(left, 1 << 20))
                if not chunk:
                    break
                fout.write(chunk)
                left -= len(chunk)
            offset = end
        fout.truncate(size)


def scrub_tree(root: Path) -> dict[str, str]:
    """Remove, in place, what must not stay in a results folder: links out of the tree
    and special files. Returns what was removed (path -> why)."""
    removed: dict[str, str] = {}
    top = os.path.normpath(str(root))
    for folder, dirs, files in os.walk(top):
        for entry in [*dirs, *files]:
            path = os.path.join(folder, entry)
            try:
                info = os.lstat(path)
            except OSError:
                continue
            why = _kind(info.st_mode)
            if stat.S_ISLNK(info.st_mode) and not link_inside(top, folder, os.readlink(path)):
                why = "a link out of the tree, removed"
            if why:
                os.unlink(path)
                removed[shown(os.path.relpath(path, top))] = why.replace("not copied", "removed")
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(folder, d))]
    return removed


def real_path(root: Path, rel: str) -> bool:
    """Whether every existing part of ``root/rel`` is a real folder (and the last part,
    if it exists, a regular file): writing there cannot be steered out by a link."""
    path = root
    parts = Path(rel).parts
    for i, part in enumerate(parts):
        path = path / part
        if not os.path.lexists(path):
            return True
        last = i == len(parts) - 1
        if path.is_symlink() or not (path.is_file() if last else path.is_dir()):
            return False
    return True


def data_filter(member: tarfile.TarInfo, path: str) -> tarfile.TarInfo | None:
    """tarfile's ``data`` filter, skipping (not failing on) what it refuses: links out of
    the destination, absolute names, devices and pipes."""
    try:
        return tarfile.data_filter(member, path)
    except tarfile.FilterError:
        return None
