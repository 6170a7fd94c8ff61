"""Old import paths kept for one minor version after the layout move (issue 21).

Each deprecated module defines ``__getattr__`` (PEP 562) with ``moved``: a name read
from the old path is looked up in its new home(s) and returned, with a
``DeprecationWarning`` naming the import to use instead.
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any


def moved(old: str, name: str, *homes: str) -> Any:
    """Attribute ``name`` of deprecated module ``old``, from the first of ``homes`` with it."""
    if name.startswith("__") and name.endswith("__"):
        raise AttributeError(f"module {old!r} has no attribute {name!r}")
    for home in homes:
        module = importlib.import_module(home)
        if hasattr(module, name):
            warnings.warn(
                f"{old} is deprecated and will be removed: import {name} from {home}",
                DeprecationWarning,
                stacklevel=3,
            )
            return getattr(module, name)
    raise AttributeError(f"module {old!r} has no attribute {name!r} (it moved to {homes[0]})")


def run_moved(old: str, home: str) -> None:
    """``python -m old``: warn, then run ``home``'s ``main()``."""
    warnings.warn(
        f"python -m {old} is deprecated: use python -m {home}", DeprecationWarning, stacklevel=2
    )
    importlib.import_module(home).main()
