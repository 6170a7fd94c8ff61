"""What a definition-level carry holds equal besides the suite's Python: every entry of
the suite folder, and every file of the scenario folder outside it that grades.

A suite can read any file it can reach, list its folder, or test a file's mode, so the
proof of its Python is worth nothing if those differ. Inside the suite folder: every
folder (an empty one too), every file's mode (the executable bits), every file that is
not Python byte for byte (one in a tool's cache folder too: only the bytecode caches
there are left out, and no loader reads them when a suite is scored:
``verify/suite_source``), and no symbolic link at all (its target may lie anywhere).
Outside it, in the scenario folder: every file that can change a scoring
(``grader.memo.grades``), byte for byte. The Python files of the suite folder are the
definition compare's business (``same_definitions``).
"""

from __future__ import annotations

import stat
from collections.abc import Iterator
from pathlib import Path

from harness.grader.memo import grades
from harness.util.fs import TOOL_CACHES


def suite_folder_differs(old_dir: Path, new_dir: Path, may_differ: frozenset[str]) -> list[str]:
    """Why the two suite folders are not the same but for their Python (empty: they are)."""
    before, after = _entries(old_dir, may_differ), _entries(new_dir, may_differ)
    out = [
        f"suite/{n}: only in {'the commit' if n in before else 'the work tree'}"
        for n in sorted(set(before) ^ set(after))
    ]
    for name in sorted(set(before) & set(after)):
        (kind, mode, data), (kind2, mode2, data2) = before[name], after[name]
        if kind == "link" or kind2 == "link":
            out.append(f"suite/{name}: a symbolic link (its target is outside every compare)")
        elif kind != kind2:
            out.append(f"suite/{name}: a {kind} at the commit, a {kind2} now")
        elif mode != mode2:
            out.append(f"suite/{name}: its mode changed ({oct(mode)} to {oct(mode2)})")
        elif data != data2:
            out.append(f"suite/{name}: its bytes changed")
    return out


def scenario_files_differ(old_suite: Path, new_suite: Path) -> list[str]:
    """The scenario folder's files outside the suite folder that grade, byte for byte."""
    before, after = _outside(old_suite), _outside(new_suite)
    out = [
        f"{n}: only in {'the commit' if n in before else 'the work tree'} (outside the suite)"
        for n in sorted(set(before) ^ set(after))
    ]
    out += [f"{n}: its bytes changed (outside the suite)" for n in sorted(set(before) & set(after))
            if before[n] != after[n]]  # fmt: skip
    return out


def _entries(root: Path, may_differ: frozenset[str]) -> dict[str, tuple[str, int, bytes]]:
    """Every entry under ``root`` but its Python files (compared as definitions) by its
    path: kind, executable bits, bytes; a folder only when it is empty (else its entries
    say it is there)."""
    out: dict[str, tuple[str, int, bytes]] = {}
    for path in _walk(root):
        rel = path.relative_to(root)
        name = rel.as_posix()
        if path.name in may_differ and len(rel.parts) == 1:
            continue
        info = path.lstat()
        if path.suffix == ".py" and not stat.S_ISLNK(info.st_mode):
            if info.st_mode & 0o111:  # its bytes are compared as definitions; a mode as is
                out[name] = ("executable Python file", stat.S_IMODE(info.st_mode) & 0o111, b"")
            continue
        if stat.S_ISLNK(info.st_mode):
            out[name] = ("link", 0, b"")
        elif stat.S_ISDIR(info.st_mode):
            if not any(path.iterdir()):
                out[name] = ("folder", 0, b"")
        else:
            out[name] = ("file", stat.S_IMODE(info.st_mode) & 0o111, path.read_bytes())
    return out


def _walk(root: Path) -> Iterator[Path]:
    """Everything under ``root``, not following links (a link is an entry, not a folder),
    but the bytecode in a tool's cache folder (never read when a suite is scored)."""
    for path in sorted(root.iterdir()):
        if path.parent.name in TOOL_CACHES and path.suffix == ".pyc":
            continue
        yield path
        if path.is_dir() and not path.is_symlink():
            yield from _walk(path)


def _outside(suite_dir: Path) -> dict[str, bytes]:
    scenario = suite_dir.parent
    out: dict[str, bytes] = {}
    for path in sorted(scenario.rglob("*")):
        rel = path.relative_to(scenario)
        if rel.parts[0] == suite_dir.name or any(p in TOOL_CACHES for p in rel.parts[:-1]):
            continue
        if path.is_file() and grades(rel.as_posix()):
            out[rel.as_posix()] = path.read_bytes()
    return out
