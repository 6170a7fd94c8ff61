"""Deprecated path ``harness.fleet.testserver``: it moved to
``harness.testing.lmstudio.__main__`` in the layout move (issue 21). Kept for one minor
version; a name read here warns and comes from its new home.
"""

from typing import Any

from harness.util.compat import moved, run_moved


def __getattr__(name: str) -> Any:
    return moved(__name__, name, "harness.testing.lmstudio.__main__")


if __name__ == "__main__":
    run_moved("harness.fleet.testserver", "harness.testing.lmstudio.__main__")
