"""The grammar of a Go test target in ``verify.tests`` (goagentbench's rules).

An entry is a target, optionally followed by one final ``-run PATTERN`` (or
``-run=PATTERN``; the pattern may be quoted) and nothing else:

- a package path (``./internal/sorting``, ``internal/sorting``),
- a package pattern ending in ``...`` (no ``-run``),
- a ``*_test.go`` file, or a glob that ends in ``_test.go`` (no ``-run``).

goagentbench refuses any other flag, so harness does too: a scenario that loads here
must run the same way there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

RUN = re.compile(r"(?:^|[ \t])-run(?=$|[ \t=])")
GLOB_CHARS = "*?["


class TargetError(ValueError):
    """A malformed target; ``fix`` says how to write it."""

    def __init__(self, message: str, fix: str) -> None:
        super().__init__(message)
        self.fix = fix


@dataclass(frozen=True)
class GoTarget:
    target: str
    run: str | None = None


def _unquote(pattern: str) -> str:
    if len(pattern) >= 2 and pattern[0] == pattern[-1] and pattern[0] in "'\"":
        return pattern[1:-1]
    if pattern[:1] in ("'", '"') or pattern[-1:] in ("'", '"'):
        raise TargetError(
            f"mismatched quotes in the -run pattern {pattern}", "quote the whole pattern"
        )
    return pattern


def _split_run(raw: str) -> tuple[str, str | None]:
    """(target part, -run pattern or None)."""
    found = list(RUN.finditer(raw))
    if not found:
        return raw, None
    if len(found) > 1:
        raise TargetError("more than one -run", "keep one final -run PATTERN")
    match = found[0]
    head = raw[: match.start()].strip()
    if not head:
        raise TargetError("-run comes before the target", "write the target first: ./pkg -run X")
    rest = raw[match.end() :]
    pattern = rest[1:].strip() if rest[:1] in ("=", " ", "\t") else rest.strip()
    if not pattern:
        raise TargetError("-run has no pattern", "write -run 'TestName'")
    flag = next((w for w in pattern.split()[1:] if w.startswith("-")), None)
    if flag is not None and pattern[0] not in "'\"":
        raise TargetError(
            f"unknown flag '{flag}' after -run",
            "goagentbench allows only one final -run PATTERN; drop the flag",
        )
    return head, _unquote(pattern)


def parse_go_target(entry: str) -> GoTarget:
    """Parse one ``verify.tests`` entry, or raise TargetError (message + fix)."""
    raw = entry.strip()
    if not raw:
        raise TargetError("empty test target", "remove the empty entry or name a package")
    if "\n" in raw or "\r" in raw:
        raise TargetError("a test target spans lines", "write one target per list entry")
    head, run = _split_run(raw)
    parts = head.split()
    flag = next((p for p in parts if p.startswith("-")), None)
    if flag is not None:
        raise TargetError(
            f"unknown flag '{flag}'",
            "goagentbench allows only a package or _test.go file and one final -run PATTERN",
        )
    if len(parts) > 1:
        raise TargetError(f"more than one target in '{head}'", "write one target per list entry")
    target = parts[0]
    if target.startswith("/"):
        raise TargetError(f"'{target}' is an absolute path", "use a path relative to the repo")
    if target.endswith("/"):
        raise TargetError(f"'{target}' ends with '/'", f"write {target.rstrip('/')}")
    if any(q in target for q in "'\""):
        raise TargetError(f"'{target}' holds quotes", "write the target without quotes")
    if any(c in target for c in GLOB_CHARS):
        if not target.endswith("_test.go"):
            raise TargetError(f"the glob '{target}' does not end in _test.go", "e.g. pkg/*_test.go")
        if run is not None:
            raise TargetError(f"the glob '{target}' has a -run", "drop -run or name the package")
    elif target.endswith(".go") and not target.endswith("_test.go"):
        raise TargetError(f"'{target}' is not a _test.go file", "name a *_test.go file")
    elif "..." in target:
        if not target.endswith("..."):
            raise TargetError(f"'{target}' has ... before its end", "end the pattern with ...")
        if run is not None:
            raise TargetError(
                f"the pattern '{target}' has a -run", "name one package to use -run with"
            )
    return GoTarget(target, run)


def looks_like_go(entry: str) -> bool:
    """True for entries only a Go runner would take (``./...``, ``x_test.go``, ``-run``)."""
    tokens = entry.split()
    if not tokens:
        return False
    run_flag = any(t.startswith("-") and t.lstrip("-").startswith("run") for t in tokens[1:])
    return tokens[0].endswith(("...", ".go")) or run_flag
