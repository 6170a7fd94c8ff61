"""Deprecated path ``harness.verify.local``: it moved to ``harness.backends.local.verify`` in
the layout move (issue 21). Kept for one minor version; a name read here warns and comes
from its new home.
"""

from typing import Any

from harness.util.compat import moved


def __getattr__(name: str) -> Any:
    return moved(__name__, name, "harness.backends.local.verify")
