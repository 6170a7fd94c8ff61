"""Load apps/invoice-sync's suite as the harness does, for its tests.

The suite is a package of modules behind ``suite.py``; ``load`` imports it under a name
of its own (registered, as ``harness.verify.scoring_bridge`` does) and ``names`` gives
every name its modules define, for tests on hand-built evidence.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace

SUITE = Path(__file__).resolve().parents[2] / "scenarios" / "apps" / "invoice-sync" / "suite"


def load(folder: Path = SUITE) -> ModuleType:
    name = f"invoice_sync_suite_{abs(hash(str(folder.resolve())))}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, folder / "suite.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def names(folder: Path = SUITE) -> SimpleNamespace:
    """Every top-level name of the suite's modules (``suite``, ``context`` and the rest)."""
    package = load(folder)
    found = {k: v for k, v in vars(package).items() if not k.startswith("__")}
    prefix = package.__name__ + "."
    for key, module in sorted(sys.modules.items()):
        if key.startswith(prefix):
            found.update({k: v for k, v in vars(module).items() if not k.startswith("__")})
    found.update(suite=package.suite, context=package.context)
    return SimpleNamespace(**found)
