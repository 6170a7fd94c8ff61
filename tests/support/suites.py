"""A scenario's scorer suite loaded as harness loads it, for the tests of its checks.

``load_suite`` imports ``<folder>/suite.py`` through the harness's own loader
(``harness.verify.scoring_bridge.load_suite_module``), once per folder and process, so a
suite's tests run exactly the code a verification runs. ``suite_names`` also gathers the
names a suite package's sibling modules define (tests on hand-built evidence call them).
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace

from harness.verify.scoring_bridge import load_suite_module

APPS = Path(__file__).resolve().parents[2] / "scenarios" / "apps"


@functools.cache
def load_suite(folder: Path) -> ModuleType:
    """The suite in ``folder`` (``scenarios/apps/<app>/suite``), imported once."""
    module: ModuleType = load_suite_module(folder)
    return module


def app_suite(app: str) -> ModuleType:
    """The shipped app's suite: ``app_suite("meridian-ledger")``."""
    return load_suite(APPS / app / "suite")


def suite_names(app: str) -> SimpleNamespace:
    """Every top-level name of the shipped app's suite package (``suite``, ``context`` and
    the names its sibling modules define)."""
    package = app_suite(app)
    found = {k: v for k, v in vars(package).items() if not k.startswith("__")}
    prefix = package.__name__ + "."
    for key, module in sorted(sys.modules.items()):
        if key.startswith(prefix):
            found.update({k: v for k, v in vars(module).items() if not k.startswith("__")})
    found.update(suite=package.suite, context=package.context)
    return SimpleNamespace(**found)
