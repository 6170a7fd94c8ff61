"""Import humanize from the workspace's src/ folder (the project uses a src layout).

humanize/_version.py is generated at install time; when the tree was never installed,
stand in a version so that ``import humanize`` works.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
sys.path.insert(0, str(SRC))
if not (SRC / "humanize" / "_version.py").exists() and "humanize._version" not in sys.modules:
    stub = types.ModuleType("humanize._version")
    setattr(stub, "__version__", "0.0.0")  # noqa: B010 (a module mypy cannot see into)
    sys.modules["humanize._version"] = stub
assert importlib.util.find_spec("humanize") is not None
