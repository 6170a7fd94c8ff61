"""A canary for forged pytest results: one test that must fail, run in the same session.

Code under test runs inside the test process, so it can rewrite what pytest reports (strip
the failures from the JUnit file at exit, patch ``TestReport``, exit 0 early). The names
check (``isolation.held_names``) cannot see that when the forged names are the suite's own. So every
pytest target also runs one file harness writes just before it, with a random name and a
random assertion message, that fails by construction. A report in which every test passed
and the canary passed too, lost its message, or is missing (a forger that deletes the
failing cases from the report at exit) was not produced by pytest as it ran: the target
is rejected. The canary is a ``unittest.TestCase``, which pytest collects from a file
named on its command line whatever the project's ``python_functions``/``python_classes``
say; a target that already failed needs none.
Targets that select tests themselves (``-k``, ``-m``, ``--deselect``, ``--collect-only``)
run without one. Pure apart from ``write``.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from harness.verify.outcome import TestCase

SELECTING = ("-k", "-m", "--deselect", "--collect-only", "--co", "--lf", "--last-failed")


@dataclass(frozen=True)
class Canary:
    """One canary file: where it is (relative to the tree), its test and its message."""

    rel: str
    func: str
    message: str
    cls: str = "TestCanary"

    @classmethod
    def fresh(cls) -> Canary:
        stem = f"test_{secrets.token_hex(6)}"
        return cls(
            f"{stem}.py", f"test_{secrets.token_hex(6)}", secrets.token_hex(12),
            f"Test_{secrets.token_hex(6)}",
        )  # fmt: skip

    def source(self) -> str:
        return (
            "import unittest\n\n\n"
            f"class {self.cls}(unittest.TestCase):\n"
            f"    def {self.func}(self):\n"
            f"        self.fail({self.message!r})\n"
        )

    def write(self, tree: Path) -> Path:
        """The file, written by the controller and read-only (0444) to the test user."""
        path = tree / self.rel
        if path.is_symlink() or path.exists():
            path.unlink()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o444)
        with os.fdopen(fd, "w") as fh:
            fh.write(self.source())
        return path

    def remove(self, tree: Path) -> None:
        path = tree / self.rel
        if path.is_symlink() or path.is_file():
            path.unlink()

    def is_case(self, case: TestCase) -> bool:
        """Whether a reported case is this canary (``<module>::<func>``)."""
        parts = case.name.split("::")
        module = self.rel.removesuffix(".py")
        return parts[-1].split("[", 1)[0] == self.func and any(module in p for p in parts[:-1])


def applies(tokens: list[str]) -> bool:
    """Whether a target's own arguments leave room for a canary (it selects nothing)."""
    return not any(t == s or t.startswith(f"{s}=") for t in tokens for s in SELECTING)


def split(canary: Canary, cases: list[TestCase]) -> tuple[list[TestCase], str | None]:
    """The suite's own cases, and why the report is forged (None when it is not)."""
    own = [c for c in cases if not canary.is_case(c)]
    seen = [c for c in cases if canary.is_case(c)]
    if not own or not all(c.passed for c in own):
        return own, None  # a failing (or empty) result cannot be a forged success
    if not seen:
        return own, "results forged: harness's failing canary is missing from the report"
    if len(seen) > 1 or seen[0].passed or canary.message not in seen[0].output:
        return own, "results forged: harness's failing canary was reported as passing"
    return own, None
