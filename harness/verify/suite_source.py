"""A scorer suite's modules imported from their source, never from a bytecode cache.

The era's fingerprint, the scenario lock and ``calibrate --carry`` all read a suite's
``.py`` sources. Python's own loaders would run a ``__pycache__`` file beside a source
instead (one whose stamp matches, or one marked never to be checked), and a sourceless
``.pyc`` as a module: code that nothing compared. Here ``suite.py`` and every module of
its package (``<package>.<name>``, at any depth) are compiled from their ``.py`` on each
import, no cache read or written, and a package module with no ``.py`` is not found.

Once a suite is imported here, no module of the process reads or writes a cache beside
its source any more (``sys.pycache_prefix`` names a folder that cannot exist), so a
suite's own loader helper cannot run a planted one either. Each import is a fresh load
of the whole package: state a module kept from an earlier scoring in this process is
gone, as it is for a suite of one file.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import CodeType, ModuleType
from typing import Any


class SourceOnly(importlib.machinery.SourceFileLoader):
    """A module's code compiled from its source file each time it is imported."""

    def get_code(self, fullname: str) -> CodeType:
        path = self.get_filename(fullname)
        return self.source_to_code(self.get_data(path), path)


class _PackageSources(importlib.abc.MetaPathFinder):
    """The modules of one suite package, found as ``.py`` files under its folder only."""

    def __init__(self, package: str, folder: Path) -> None:
        self.package, self.folder = package, folder

    def find_spec(
        self, name: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if not name.startswith(self.package + "."):
            return None
        rel = Path(*name[len(self.package) + 1 :].split("."))
        file, init = self.folder / rel.with_suffix(".py"), self.folder / rel / "__init__.py"
        if init.is_file():
            return _spec(name, init, package=True)
        if file.is_file():
            return _spec(name, file)
        raise ModuleNotFoundError(f"no {rel}.py in the suite folder {self.folder}", name=name)


def _spec(name: str, file: Path, package: bool = False) -> importlib.machinery.ModuleSpec:
    spec = importlib.util.spec_from_file_location(
        name,
        file,
        loader=SourceOnly(name, str(file)),
        submodule_search_locations=[str(file.parent)] if package else None,
    )
    assert spec is not None
    return spec


def import_suite(name: str, path: Path) -> Any:
    """Import ``path`` (a suite's ``suite.py``) as module ``name`` from its source, the
    modules of its package (``name.<module>``) likewise."""
    sys.dont_write_bytecode = True
    sys.pycache_prefix = os.devnull  # a cache folder no loader can read from or write to
    for loaded in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[loaded]  # a fresh load: no state kept from an earlier scoring
    if not any(isinstance(f, _PackageSources) and f.package == name for f in sys.meta_path):
        sys.meta_path.insert(0, _PackageSources(name, path.parent))
    spec = _spec(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module
