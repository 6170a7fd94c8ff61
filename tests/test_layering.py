"""The layering contract: each package of ``harness/`` imports only packages below it.

Every import counts (module level, function-local and under ``TYPE_CHECKING``). Packages
on one layer must not import each other. The deprecation shims of old import paths are
exempt: they point upward on purpose. See docs/ARCHITECTURE.md for the order.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parent.parent / "harness"

# top -> bottom; the units on one line are siblings that must not import each other
LAYERS: list[set[str]] = [
    {"testing"},  # for tests and benchmarks only: nothing in harness/ imports it
    {"__main__"},
    {"cli"},
    {"authoring"},
    {"grader", "job", "report"},
    {"trial"},
    {"backends"},
    {"agents", "verify"},
    {"scoring", "gateway"},
    {"fleet", "provision"},
    {"images"},
    {"sandbox"},
    {"scenario", "results"},
    {"config"},
    {"util"},
    {"errors", "__init__"},
]

# old import paths kept for one minor version; they re-export from above on purpose
SHIMS = {
    "harness.budget",
    "harness.calibrate",
    "harness.containment",
    "harness.controls",
    "harness.deep",
    "harness.fsutil",
    "harness.gab",
    "harness.gitutil",
    "harness.project",
    "harness.proof_env",
    "harness.pyreqs",
    "harness.registry",
    "harness.repo",
    "harness.settings",
    "harness.targets",
    "harness.toolchain",
    "harness.trialseed",
    "harness.workspace",
    "harness.yamlload",
    "harness.clihelp",
    "harness.agents.registry_real",
    "harness.authoring.cli",
    "harness.authoring.versions",
    "harness.fleet.cli",
    "harness.fleet.container",
    "harness.fleet.gateway",
    "harness.fleet.gateway.__main__",
    "harness.fleet.local",
    "harness.fleet.routing",
    "harness.fleet.serving",
    "harness.fleet.shared",
    "harness.fleet.testserver",
    "harness.images.cli",
    "harness.images.inject",
    "harness.job.cli",
    "harness.job.executor",
    "harness.job.ray_executor",
    "harness.report.cli",
    "harness.sandbox.factory",
    "harness.sandbox.policy",
    "harness.scoring.controls",
    "harness.verify.container",
    "harness.verify.envcheck",
    "harness.verify.local",
    "harness.verify.results",
}


def _modules() -> dict[str, Path]:
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _imports(name: str, path: Path) -> set[str]:
    """Every harness module ``name`` imports, wherever the import statement sits."""
    out: set[str] = set()
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                stem = package[: len(package) - node.level + 1]
                base = ".".join([*stem, base] if base else stem)
            out.add(base)
            out.update(f"{base}.{a.name}" for a in node.names)
    return {m for m in out if m == "harness" or m.startswith("harness.")}


def _unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _rank(unit: str) -> int:
    for i, layer in enumerate(LAYERS):
        if unit in layer:
            return len(LAYERS) - i
    raise AssertionError(f"harness.{unit} has no layer: add it to LAYERS in {__file__}")


def test_every_package_has_a_layer() -> None:
    for name in _modules():
        if name not in SHIMS:
            _rank(_unit(name))


def test_imports_point_down_the_layers() -> None:
    modules = _modules()
    broken = []
    for name, path in sorted(modules.items()):
        if name in SHIMS:
            continue
        here = _unit(name)
        for target in sorted(_imports(name, path)):
            if target not in modules and target.rpartition(".")[0] in modules:
                continue  # `from pkg import name` where name is not a module
            there = _unit(target)
            if there == here or target == "harness":
                continue
            if target in SHIMS:
                broken.append(f"{name} imports the deprecated shim {target}")
            elif _rank(there) >= _rank(here):
                broken.append(f"{name} ({here}) imports {target} ({there})")
    assert broken == [], "layering contract broken:\n" + "\n".join(broken)


def test_no_shim_is_missing_its_module() -> None:
    modules = _modules()
    assert sorted(SHIMS - set(modules)) == []


def test_nothing_in_harness_imports_the_testing_package() -> None:
    """``harness.testing`` (the LM Studio look-alike host) is for tests and benchmarks."""
    users = [
        f"{name} imports {target}"
        for name, path in sorted(_modules().items())
        if _unit(name) != "testing"
        for target in sorted(_imports(name, path))
        if _unit(target) == "testing"
    ]
    assert users == [], "product code imports the test-only package:\n" + "\n".join(users)


def _import_graph() -> dict[str, set[str]]:
    """Module -> the harness modules it imports, wherever the import statement sits.

    ``from pkg import mod`` is an edge to ``pkg.mod`` when that is a module, else to
    ``pkg`` (the name is defined there); the package ``__init__`` Python runs on the way
    to a submodule is the import system's doing, not an edge."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    stem = package[: len(package) - node.level + 1]
                    base = ".".join([*stem, base] if base else stem)
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    found.add(full if full in modules else base)
        graph[name] = {m for m in found if m in modules and m != name}
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    circles.append(sorted(group))
    return circles


def test_circles_are_found() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert _circles(graph) == [["a", "b", "c"]]


def test_no_module_imports_itself_through_others() -> None:
    """No import circle between modules, of any length: every import counts, so a
    function-local or ``TYPE_CHECKING`` import does not hide one (a package's
    ``__init__`` and its own modules included)."""
    circles = _circles(_import_graph())
    assert circles == [], "import circles:\n" + "\n".join(" <-> ".join(c) for c in circles)
