"""Modification rules over the agent's changed files (pure: no I/O).

goagentbench semantics: a ``must-modify`` directory is satisfied by a change to a file
directly inside it (not recursively); entries may be globs. ``no-modify`` and
``only-modify`` directories cover everything below them.
"""

from __future__ import annotations

from collections.abc import Callable
from fnmatch import fnmatchcase

from pydantic import BaseModel


class RuleResult(BaseModel):
    rule: str  # must-modify | no-modify | only-modify
    entry: str
    ok: bool
    detail: str


IsDir = Callable[[str], bool]


def _norm(entry: str) -> str:
    return entry.strip().removeprefix("./").rstrip("/") or "."


def _is_glob(entry: str) -> bool:
    return any(c in entry for c in "*?[")


def _under(path: str, directory: str, recursive: bool) -> bool:
    if directory == ".":
        return recursive or "/" not in path
    if not path.startswith(directory + "/"):
        return False
    return recursive or "/" not in path[len(directory) + 1 :]


def matches(path: str, entry: str, is_dir: IsDir, *, recursive: bool) -> bool:
    """Does a changed file ``path`` fall under one rule ``entry``?"""
    entry = _norm(entry)
    if _is_glob(entry):
        return fnmatchcase(path, entry) or fnmatchcase(path, entry + "/*")
    if path == entry:
        return True
    if is_dir(entry) or entry == ".":
        return _under(path, entry, recursive)
    return False


def check_rules(
    changed: list[str],
    must_modify: list[str],
    no_modify: list[str],
    only_modify: list[str],
    is_dir: IsDir,
) -> list[RuleResult]:
    """One result per rule entry, in declaration order."""
    results: list[RuleResult] = []
    for entry in must_modify:
        hits = [p for p in changed if matches(p, entry, is_dir, recursive=False)]
        results.append(
            RuleResult(
                rule="must-modify",
                entry=entry,
                ok=bool(hits),
                detail=f"modified: {', '.join(hits[:5])}" if hits else "nothing modified there",
            )
        )
    for entry in no_modify:
        hits = [p for p in changed if matches(p, entry, is_dir, recursive=True)]
        results.append(
            RuleResult(
                rule="no-modify",
                entry=entry,
                ok=not hits,
                detail=f"protected files changed: {', '.join(hits[:5])}" if hits else "untouched",
            )
        )
    if only_modify:
        outside = [
            p
            for p in changed
            if not any(matches(p, e, is_dir, recursive=True) for e in only_modify)
        ]
        results.append(
            RuleResult(
                rule="only-modify",
                entry=", ".join(only_modify),
                ok=not outside,
                detail=f"changed outside: {', '.join(outside[:5])}" if outside else "all inside",
            )
        )
    return results
