"""Error types that map onto the CLI's exit codes.

``UserError`` (exit 2) is a mistake the user can fix: it names the file, the field and
the fix, and prints as one line. ``InfraError`` (exit 3) is the harness or its
environment failing (Docker, a dead fleet, a broken image), never the agent's fault.
"""

from __future__ import annotations

from pathlib import Path

EXIT_SUCCESS = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_INFRA = 3


class HarnessError(Exception):
    """Base class for errors harness reports without a traceback."""

    exit_code = EXIT_INFRA

    def __init__(
        self,
        message: str,
        *,
        file: str | Path | None = None,
        field: str | None = None,
        fix: str | None = None,
    ) -> None:
        self.message = message
        self.file = str(file) if file is not None else None
        self.field = field
        self.fix = fix
        super().__init__(self.one_line())

    def one_line(self) -> str:
        """Render as ``file: field: message (fix: ...)`` on a single line."""
        parts = [p for p in (self.file, self.field) if p]
        head = ": ".join([*parts, self.message])
        if self.fix:
            head = f"{head} (fix: {self.fix})"
        return " ".join(head.split())


class UserError(HarnessError):
    """Bad input: a malformed scenario, an unknown agent, a missing bundle..."""

    exit_code = EXIT_BAD_INPUT


class InfraError(HarnessError):
    """The infrastructure failed: Docker, image builds, the fleet."""

    exit_code = EXIT_INFRA
