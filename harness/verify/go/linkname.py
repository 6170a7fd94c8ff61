"""The agent's Go code may not reach into the test binary's own table or ``testing``.

``//go:linkname local main.tests`` in a file of the agent's package gives its ``init()``
the generated test main's table of tests (names and functions), which it can rewrite
before any test runs: every hidden test's function swapped for an empty one, the
canary's (a name the suite does not hold) left alone. Every test then runs and passes,
the canary fails as it must, and every hidden test is reported (``verify.go.unrun``):
what an honest run of correct code looks like. The same holds for the ``testing``
package's internals. So a Go file the agent changed or added that links a name of the
``main`` package (the generated test main), of ``testing`` or of a package below it, or
an assembly file that names one of their symbols, fails the target. Linking the
runtime's helpers (``runtime.nanotime``, the common use) stays allowed. (Code that finds
the table through ``unsafe`` and the binary's symbol table is not seen: the same class
as a forger that finds the canary.) Pure over the tree's text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

LINKNAME = re.compile(r"^\s*//go:linkname\s+\S+\s+(\S+)", re.MULTILINE)
# Go assembly writes a package path with U+2215 for "/" and U+00B7 before the name
ASM_SYMBOL = re.compile("\\b(main|testing(?:\u2215\\w+)*)\u00b7")
MAX_SOURCE = 4 * 1024 * 1024


def _package(symbol: str) -> str:
    """The import path a linked symbol belongs to: ``testing.(*common).Fail`` ->
    ``testing``, ``main.tests`` -> ``main``, ``a/b.c`` -> ``a/b``."""
    head, _, tail = symbol.rpartition("/")
    pkg = tail.split(".", 1)[0]
    return f"{head}/{pkg}" if head else pkg


def _forbidden(pkg: str) -> bool:
    return pkg == "main" or pkg == "testing" or pkg.startswith("testing/")


def reach(tree: Path, changed: Iterable[str], hidden: Iterable[str]) -> str | None:
    """Why the agent's Go files reach the test binary's internals (None: they do not)."""
    held = set(hidden)
    for rel in sorted(set(changed) - held):
        if not rel.endswith((".go", ".s")):
            continue
        path = tree / rel
        if path.is_symlink() or not path.is_file():
            continue
        with path.open("rb") as fh:
            text = fh.read(MAX_SOURCE).decode("utf-8", "replace")
        if rel.endswith(".go"):
            for symbol in LINKNAME.findall(text):
                if _forbidden(_package(symbol)):
                    return f"{rel} links {symbol}, an internal of the test binary"
        else:
            m = ASM_SYMBOL.search(text)
            if m:
                return f"{rel} names {m.group(0)} symbols, internals of the test binary"
    return None
