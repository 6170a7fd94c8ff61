"""Directives that make the Go build run or link what a Go file names are refused.

A Go file can steer its own build: ``//go:cgo_ldflag`` (and the other ``//go:cgo_*``
directives cgo writes into its generated files) hands flags to the external linker,
so ``-B`` with a folder of the tree makes the tree's own ``collect2``/``ld`` run as the
builder; ``//line`` (and ``/*line``) directives rename a file's position, which is how
CVE-2023-39323 (Go before 1.20.9 / 1.21.2) smuggles such directives past the checks
that allow them only in cgo's output. A fix to a Go package never needs either, and
cgo is off unless the scenario declares ``environment.cgo``. So a ``.go`` file the agent
changed or added that holds one fails the target before anything is built, with the
file and line named. Files of the repository as it was (the baseline's generated
parsers, say) and the hidden tests are not judged. Pure over the tree's text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

#: ``//go:cgo_*`` at a line's start; ``//line`` at a line's start; ``/*line`` anywhere
DIRECTIVE = re.compile(rb"^[ \t]*//(go:cgo_\w*|line[ \t])|/\*line[ \t]", re.MULTILINE)
MAX_SOURCE = 4 * 1024 * 1024


def refusal(tree: Path, changed: Iterable[str], hidden: Iterable[str]) -> str | None:
    """Why the agent's Go files are refused (None: they hold no build directive)."""
    held = set(hidden)
    for rel in sorted(set(changed) - held):
        if not rel.endswith(".go"):
            continue
        path = tree / rel
        if path.is_symlink() or not path.is_file():
            continue
        with path.open("rb") as fh:
            text = fh.read(MAX_SOURCE)
        m = DIRECTIVE.search(text)
        if m:
            line = text.count(b"\n", 0, m.start()) + 1
            what = m.group(0).strip().decode("ascii", "replace")
            return (
                f"{rel}:{line} holds a {what!r} directive, which steers the Go build "
                "(refused in the agent's files: cgo linker flags and //line are never "
                "needed by a fix)"
            )
    return None
