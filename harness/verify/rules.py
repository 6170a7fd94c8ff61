"""Modification rules over the agent's changed files (pure: no I/O).

Two dialects, chosen by the scenario (``rules_dialect``):

``goagentbench`` (a scenario file without harness's ``version``): goagentbench's meaning,
checked against a table its own matcher produced (``tests/verify/data``). An entry with
``*``, ``?`` or ``[`` is a Go ``filepath.Match`` pattern over the whole path (``*`` and
``?`` never cross ``/``; a malformed pattern matches nothing); any other entry matches the
path itself, or, when it names a directory (it ends in ``/`` or is one in the tree), the
files directly inside it, not below. ``must-modify`` and ``no-modify`` match the same way,
and files at the root whose name starts with a dot are not changes.

``harness`` (a versioned scenario): the same, except that ``**`` crosses ``/`` and a
``no-modify`` or ``only-modify`` entry covers everything below a directory it matches.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel

Dialect = Literal["goagentbench", "harness"]


class RuleResult(BaseModel):
    rule: str  # must-modify | no-modify | only-modify
    entry: str
    ok: bool
    detail: str


IsDir = Callable[[str], bool]


def clean(path: str) -> str:
    """Go's ``filepath.Clean`` for slash paths."""
    out = posixpath.normpath(path) if path else "."
    return "/" + out.lstrip("/") if out.startswith("//") else out


class BadPattern(ValueError):
    """The glob is malformed (Go's ``filepath.ErrBadPattern``): it matches nothing."""


def _escaped(pattern: str, i: int) -> tuple[str, int]:
    """One class character at ``i`` (``\\c`` is ``c``); ``-`` and ``]`` need escaping."""
    if i >= len(pattern) or pattern[i] in "-]":
        raise BadPattern(pattern)
    if pattern[i] == "\\":
        i += 1
        if i >= len(pattern):
            raise BadPattern(pattern)
    return pattern[i], i + 1


def _class(pattern: str, i: int) -> tuple[str, int]:
    """The regex of a ``[...]`` class opening at ``i - 1``, and the index after it."""
    negated = i < len(pattern) and pattern[i] == "^"
    i += negated
    ranges: list[str] = []
    while True:
        if i < len(pattern) and pattern[i] == "]" and ranges:
            i += 1
            break
        lo, i = _escaped(pattern, i)
        hi = lo
        if i < len(pattern) and pattern[i] == "-":
            hi, i = _escaped(pattern, i + 1)
        ranges.append(re.escape(lo) if lo == hi else f"{re.escape(lo)}-{re.escape(hi)}")
        if lo > hi:  # an empty range: valid, and never matches
            ranges[-1] = ""
    body = "".join(ranges)
    if negated:
        return (f"[^{body}]" if body else "(?s:.)"), i
    return (f"[{body}]" if body else "(?!)"), i


@lru_cache(maxsize=1024)
def _glob(pattern: str, deep: bool) -> re.Pattern[str] | None:
    """``pattern`` as a regex (``deep``: ``**`` crosses ``/``); None when malformed."""
    out: list[str] = []
    i = 0
    try:
        while i < len(pattern):
            c = pattern[i]
            i += 1
            if c == "*":
                if deep and i < len(pattern) and pattern[i] == "*":
                    while i < len(pattern) and pattern[i] == "*":
                        i += 1
                    out.append("(?s:.*)")
                else:
                    out.append("[^/]*")
            elif c == "?":
                out.append("[^/]")
            elif c == "[":
                regex, i = _class(pattern, i)
                out.append(regex)
            elif c == "\\":
                if i >= len(pattern):
                    raise BadPattern(pattern)
                out.append(re.escape(pattern[i]))
                i += 1
            else:
                out.append(re.escape(c))
    except BadPattern:
        return None
    return re.compile("".join(out))


def is_glob(entry: str) -> bool:
    return any(c in entry for c in "*?[")


def matches(path: str, entry: str, is_dir: IsDir, *, deep: bool = False) -> bool:
    """goagentbench's match of one changed file against one rule entry (``deep``:
    harness's ``**``). ``is_dir`` is asked about the cleaned entry, relative to the tree."""
    if not entry.strip():
        return False
    path = clean(path)
    if is_glob(entry):
        regex = _glob(entry, deep)
        return regex is not None and regex.fullmatch(path) is not None
    rule = clean(entry)
    if path == rule:
        return True
    if entry.endswith("/") or is_dir(rule.lstrip("/") or "."):
        return posixpath.dirname(path) == rule or ("/" not in path and rule == ".")
    return False


def covers(path: str, entry: str, is_dir: IsDir, dialect: Dialect) -> bool:
    """Does a ``no-modify``/``only-modify`` entry cover ``path``? goagentbench: as
    ``matches``; harness: also when it matches a directory the path is inside."""
    if dialect == "goagentbench":
        return matches(path, entry, is_dir)
    parts = clean(path).split("/")
    prefixes = ["/".join(parts[:n]) for n in range(len(parts), 0, -1)]
    if clean(entry) == ".":
        return True
    return any(matches(p, entry, is_dir, deep=True) for p in prefixes)


def counted(changed: list[str], dialect: Dialect) -> list[str]:
    """The changes the rules see: goagentbench ignores the root's dot-files."""
    if dialect == "harness":
        return changed
    return [p for p in changed if not (p.startswith(".") and "/" not in clean(p))]


def check_rules(
    changed: list[str],
    must_modify: list[str],
    no_modify: list[str],
    only_modify: list[str],
    is_dir: IsDir,
    dialect: Dialect = "harness",
) -> list[RuleResult]:
    """One result per rule entry, in declaration order."""
    changed = counted(changed, dialect)
    deep = dialect == "harness"
    results: list[RuleResult] = []
    for entry in must_modify:
        hits = [p for p in changed if matches(p, entry, is_dir, deep=deep)]
        results.append(
            RuleResult(
                rule="must-modify",
                entry=entry,
                ok=bool(hits),
                detail=f"modified: {', '.join(hits[:5])}" if hits else "nothing modified there",
            )
        )
    for entry in no_modify:
        hits = [p for p in changed if covers(p, entry, is_dir, dialect)]
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
            p for p in changed if not any(covers(p, e, is_dir, "harness") for e in only_modify)
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
