"""The hidden suite's Python files, listed for ``plugins/peek_guard`` (the code under test
may not read them while they run): one tree-relative path a line, in the test user's home,
named to the run by ``HARNESS_HIDDEN_FILES``."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from harness.verify.python.agent_files import place

ENV = "HARNESS_HIDDEN_FILES"


def listing(hidden: Iterable[str]) -> str:
    """The hidden suite's Python files, one a line."""
    rels = sorted({h for h in hidden if h.endswith(".py") and "\n" not in h})
    return "".join(f"{rel}\n" for rel in rels)


def write_listing(home: Path, hidden: Iterable[str]) -> Path | None:
    """The listing in the test user's home (the controller's file), or None when empty."""
    return place(home / "hidden-files.txt", listing(hidden))
