"""Import a Python file that is not on the path (a script, a scenario's suite) as a module."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType


def load_file(path: Path, name: str | None = None) -> ModuleType:
    """``path`` executed as a fresh module named ``name`` (default: the file's stem)."""
    spec = importlib.util.spec_from_file_location(name or path.stem, path)
    assert spec and spec.loader, path
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
