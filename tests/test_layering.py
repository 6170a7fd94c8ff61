"""The layering contract: each package of ``harness/`` imports only packages below it.

Every import counts (module level, function-local, under ``TYPE_CHECKING``, and a module
named in a string to ``import_module``). Packages on one layer must not import each other.
See docs/ARCHITECTURE.md for the order.
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
    {"appkit"},
    {"scoring", "gateway"},
    {"fleet", "provision"},
    {"images"},
    {"sandbox"},
    {"scenario", "results"},
    {"config"},
    {"util"},
    {"errors", "__init__"},
]


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
        elif isinstance(node, ast.Call) and _is_import_module(node.func) and node.args:
            out.add(_module_named(node.args[0]))
    return {m for m in out if m == "harness" or m.startswith("harness.")}


def _is_import_module(func: ast.expr) -> bool:
    """``import_module(...)`` or ``importlib.import_module(...)``, however imported."""
    if isinstance(func, ast.Attribute):
        return func.attr == "import_module"
    return isinstance(func, ast.Name) and func.id == "import_module"


def _module_named(arg: ast.expr) -> str:
    """The module a string names: a literal, or an f-string's fixed head up to its last dot."""
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    if isinstance(arg, ast.JoinedStr) and arg.values:
        head = arg.values[0]
        if isinstance(head, ast.Constant) and isinstance(head.value, str):
            return head.value.rpartition(".")[0]
    return ""


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
        _rank(_unit(name))


def test_imports_point_down_the_layers() -> None:
    modules = _modules()
    broken = []
    for name, path in sorted(modules.items()):
        here = _unit(name)
        for target in sorted(_imports(name, path)):
            if target not in modules and target.rpartition(".")[0] in modules:
                continue  # `from pkg import name` where name is not a module
            there = _unit(target)
            if there == here or target == "harness":
                continue
            if _rank(there) >= _rank(here):
                broken.append(f"{name} ({here}) imports {target} ({there})")
    assert broken == [], "layering contract broken:\n" + "\n".join(broken)


def test_a_module_named_to_import_module_counts(tmp_path: Path) -> None:
    source = tmp_path / "mod.py"
    source.write_text(
        "import importlib\n"
        "from importlib import import_module\n"
        "def f(name):\n"
        "    importlib.import_module('harness.cli')\n"
        "    import_module('harness.trial.trial')\n"
        "    import_module(f'harness.grader.{name}')\n"
        "    import_module('json')\n",
        encoding="utf-8",
    )
    assert _imports("harness.util.mod", source) == {
        "harness.cli",
        "harness.trial.trial",
        "harness.grader",
    }


def test_harness_holds_one_loose_module() -> None:
    loose = {p.name for p in ROOT.glob("*.py")} - {"__init__.py", "__main__.py"}
    assert loose == {"errors.py"}


# verify/'s own order, top -> bottom: the flow (engine of a verification and its parts),
# the runner map, one package per runner (never importing each other), process isolation,
# and the result types everything returns
VERIFY_LAYERS: list[set[str]] = [
    {"flow"},
    {"runners"},
    {"python", "go"},
    {"isolation"},
    {"outcome"},
    {"rules"},
]


def _verify_unit(module: str) -> str:
    parts = module.split(".")[2:]  # harness.verify.<part>...
    if not parts:
        return "flow"
    if parts[0] in {"python", "go", "isolation", "runners", "outcome", "rules"}:
        return parts[0]
    return "flow"


def _verify_rank(unit: str) -> int:
    return next(len(VERIFY_LAYERS) - i for i, layer in enumerate(VERIFY_LAYERS) if unit in layer)


def test_verify_imports_point_down_its_own_layers() -> None:
    modules = _modules()
    broken = []
    for name, path in sorted(modules.items()):
        if not name.startswith("harness.verify.") and name != "harness.verify":
            continue
        here = _verify_unit(name)
        for target in sorted(_imports(name, path)):
            if target == "harness.verify" or not target.startswith("harness.verify."):
                continue  # `from harness.verify import go`: the module, not the package
            if target not in modules and target.rpartition(".")[0] in modules:
                target = target.rpartition(".")[0]  # `from mod import name`
            there = _verify_unit(target)
            if there != here and _verify_rank(there) >= _verify_rank(here):
                broken.append(f"{name} ({here}) imports {target} ({there})")
    assert broken == [], "verify's layering broken:\n" + "\n".join(broken)


def test_verify_runners_are_laid_out_as_the_order_says() -> None:
    packages = {p.name for p in (ROOT / "verify").iterdir() if (p / "__init__.py").is_file()}
    assert packages == {"python", "go", "isolation"}


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
