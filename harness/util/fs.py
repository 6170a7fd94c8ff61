"""Small filesystem helpers: atomic writes, copy steps, sha256 of files, tool caches."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import stat
import tempfile
from pathlib import Path
from typing import Any

#: Folders that tools write beside code (bytecode, type checker, linter, test runner):
#: never content, so a fingerprint or a scenario's hash leaves them out.
TOOL_CACHES = frozenset({"__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache"})


def in_tool_cache(path: Path, root: Path) -> bool:
    """Whether ``path`` (under ``root``) lies in a tool's cache folder. A ``.pyc`` outside
    ``__pycache__`` is content: Python imports a sourceless one as the module itself."""
    return any(part in TOOL_CACHES for part in path.relative_to(root).parts[:-1])


def write_atomic(path: Path, data: str | bytes, durable: bool = True) -> None:
    """Write via a temp file in the same folder and rename: readers never see half.

    ``durable=False`` skips the fsync: still atomic for readers, but a power cut may lose
    the new content (fine for derived artefacts such as the board's pages)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode() if isinstance(data, str) else data)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json(path: Path, obj: Any) -> None:
    write_atomic(path, json.dumps(obj, indent=2, sort_keys=False, default=str) + "\n")


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


_NO_FILE = (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)


def read_text_file(path: str) -> str | None:
    """``Path(path).read_text(encoding="utf-8", errors="replace")`` of a regular file,
    None when ``path`` is no file (``is_file``): the bytes decoded whole and newlines
    translated as text mode does, without a text wrapper (the board reads one per run)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
    except OSError as exc:  # the errors ``is_file`` reads as "no file"
        if exc.errno not in _NO_FILE:
            raise
        return None
    except ValueError:
        return None
    with open(path, "rb") as fh:
        text = fh.read().decode("utf-8", errors="replace")
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def stat_signature(path: str) -> str:
    """What a file's ``stat`` says of its content (mtime, size, inode), or ``-`` when
    it is not there: a cheap "has it changed since" for caches of parsed files."""
    try:
        st = os.stat(path)
    except OSError:
        return "-"
    return f"{st.st_mtime_ns}:{st.st_size}:{st.st_ino}"


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 16), b""):
            digest.update(chunk)
    return digest.hexdigest()


def copy_destinations(src: Path, to: str, root: Path) -> list[tuple[Path, Path]]:
    """Pairs (source file, destination) for one ``{from, to}`` step.

    A directory's contents are merged into ``to``; a file lands in the directory ``to``
    under its own name, unless ``to`` names a file with the same suffix.
    """
    target = (root / to).resolve()
    if not target.is_relative_to(root.resolve()):
        raise ValueError(f"'{to}' points outside the workspace")
    if src.is_dir():
        return [(f, target / f.relative_to(src)) for f in sorted(src.rglob("*")) if f.is_file()]
    if target.suffix and target.suffix == src.suffix and not target.is_dir():
        return [(src, target)]
    return [(src, target / src.name)]


def link_on_the_way(root: Path, dest: Path) -> Path | None:
    """The first symbolic link among ``dest`` and its folders below ``root``, if any."""
    here = root
    for part in dest.relative_to(root).parts:
        here = here / part
        if here.is_symlink():
            return here
        if not here.exists():
            return None
    return None


def copy_pairs(pairs: list[tuple[Path, Path]]) -> None:
    for src, dest in pairs:
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest)


def copytree(src: Path, dest: Path) -> None:
    """Copy a whole tree (symlinks kept as links)."""
    shutil.copytree(src, dest, symlinks=True)


def make_dirs(path: Path) -> list[Path]:
    """``mkdir -p path``; returns the folders it created, outermost first."""
    created = [p for p in (path, *path.parents) if not p.exists()][::-1]
    path.mkdir(parents=True, exist_ok=True)
    return created


def remove_empty_dirs(folders: list[Path]) -> None:
    """Remove those of ``folders`` that are (still) empty, innermost first."""
    for folder in reversed(folders):
        try:
            folder.rmdir()
        except OSError:  # not empty (someone else's work), or already gone
            continue


def hidden_paths(root: Path, paths: list[str]) -> list[tuple[Path, str]]:
    """(source file, relative path) for every file under ``paths`` of ``root``."""
    pairs: list[tuple[Path, str]] = []
    for path in paths:
        src = root / path
        if src.is_dir():
            for file in sorted(p for p in src.rglob("*") if p.is_file()):
                pairs.append((file, file.relative_to(root).as_posix()))
        elif src.is_file():
            pairs.append((src, path))
    return pairs
