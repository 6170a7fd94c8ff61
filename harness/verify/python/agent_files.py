"""The agent's Python files, listed for the plugins that charge the code under test
(``plugins/charged_skips``, ``plugins/equality_guard``, ``plugins/runner_guard``,
``plugins/peek_guard``): one tree-relative path a line, in the test user's home, named to
the run by ``HARNESS_AGENT_FILES``."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

ENV = "HARNESS_AGENT_FILES"


def listing(changed: Iterable[str], hidden: Iterable[str]) -> str:
    """The agent's Python files (changed or added, the hidden files left out), one a line."""
    held = set(hidden)
    rels = sorted({c for c in changed if c.endswith(".py") and c not in held})
    return "".join(f"{rel}\n" for rel in rels if "\n" not in rel)


def write_listing(home: Path, changed: Iterable[str], hidden: Iterable[str]) -> Path | None:
    """The listing in the test user's home (the controller's file), or None when empty."""
    return place(home / "agent-files.txt", listing(changed, hidden))


def place(path: Path, text: str) -> Path | None:
    """``text`` at ``path``, read-only to the test user; None (nothing written) when empty."""
    if not text:
        return None
    path.write_text(text, encoding="utf-8")
    path.chmod(0o444)
    return path
