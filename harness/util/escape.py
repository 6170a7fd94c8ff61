"""Text from a workspace (file names, test output), made safe for a terminal.

A file name or a test's output can hold terminal control sequences (``ESC [2K``, a
carriage return, a cursor move) that rewrite what an operator reads: an outcome line
printed as SUCCESS over a FAILED one. ``for_terminal`` shows every control character
except newline and tab as a visible escape (``\\x1b``), and so are the C1 controls and the
Unicode bidirectional overrides that reorder a line. Pages escape HTML on their own
(``html.escape`` in the board).
"""

from __future__ import annotations

import re

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _show(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def one_line(value: object) -> str:
    """A value from the workspace (a file name, a test name) on one line: its newlines
    shown as ``\\n``, so it cannot start a line of its own (a forged outcome line)."""
    return str(value).replace("\n", "\\n")


def for_terminal(text: str) -> str:
    """``text`` with every control character but newline and tab shown as an escape."""
    return _UNSAFE.sub(_show, text)
