"""Describe one tree's suite as a graph (``defs_graph``), in a process of its own.

``python -m harness.grader.defs_describe SUITE_DIR MOVES_JSON``, the current harness
first on the path: old module names ``--moved`` are imported as their new homes (the
file-level compare proved them the same code), the suite is loaded as the harness loads
it, and one JSON object is printed (its parts: ``defs_graph``'s docstring).
"""

from __future__ import annotations

import builtins
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import sys
import types
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.grader.defs_ast import Json
from harness.grader.defs_graph import Graph
from harness.grader.defs_toplevel import load_effects
from harness.grader.same_code import moved_name
from harness.verify.scoring_bridge import load_suite_module


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Old module names (``--moved``) imported as the modules at their new homes."""

    def __init__(self, moves: Mapping[str, str]) -> None:
        self.moves = moves

    def find_spec(self, name: str, path: Sequence[str] | None, target: Any = None) -> Any:
        if moved_name(name, self.moves) == name:
            return None
        return importlib.util.spec_from_loader(name, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return importlib.import_module(moved_name(spec.name, self.moves))

    def exec_module(self, module: types.ModuleType) -> None:
        return None


def describe_suite(suite_dir: Path, moves: Mapping[str, str]) -> dict[str, Json]:
    """Load the suite (as the harness does) and describe it (see the module's docstring)."""
    if moves:
        sys.meta_path.insert(0, _Alias(moves))
    before = set(sys.modules)
    module = load_suite_module(suite_dir)
    graph = Graph(suite_dir, moves)
    suite_modules = {n: m for n, m in sys.modules.items() if graph.suite_module(m)}
    for name, mod in suite_modules.items():
        graph.suite_module_names[name] = Path(mod.__file__ or "").name
    for name, mod in suite_modules.items():  # what each function's builtins really are
        if vars(mod).get("__builtins__") not in (builtins, vars(builtins)):
            graph.problems.append(f"{graph.suite_module_names[name]} rebinds __builtins__")
    roots = {name: graph.describe(getattr(module, name, None)) for name in ("suite", "context")}
    effects = load_effects(graph, suite_modules.values())
    graph.fill()
    # an old name --moved is its new home: new only if that was not loaded before
    imported = sorted(
        {moved_name(n, moves) for n in set(sys.modules) - before if n not in suite_modules} - before
    )
    loaded = sorted(
        Path(m.__file__ or "").resolve().relative_to(graph.suite_dir).as_posix()
        for m in suite_modules.values()
    )
    return {
        "roots": roots,
        "nodes": graph.nodes,
        "effects": effects,
        "imported": imported,
        "modules": loaded,
        "problems": graph.problems,
    }


def main(argv: list[str]) -> int:
    suite_dir, moves = Path(argv[0]), json.loads(argv[1]) if len(argv) > 1 else {}
    described = describe_suite(suite_dir, moves)
    sys.stdout.write("\n" + json.dumps(described, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
