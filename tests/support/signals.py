"""Children that a test interrupts with SIGINT, as Ctrl-C would."""

from __future__ import annotations

import sys

# A child the test interrupts with SIGINT must not inherit an ignored SIGINT (a suite
# started in the background by a non-interactive shell ignores it, and Python keeps it
# ignored): this prefix restores the default disposition, then execs the command.
_SIGINT_DEFAULT = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execvp(sys.argv[1], sys.argv[1:])"
)


def interruptible(cmd: list[str]) -> list[str]:
    """``cmd`` so that SIGINT reaches it as Ctrl-C would, however pytest was started."""
    return [sys.executable, "-c", _SIGINT_DEFAULT, *cmd]
