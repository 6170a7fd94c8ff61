"""Whether two trees grade with the same code, modules moved: static reading, no import.

``reach`` finds every Python file a suite can run, from its own folder through each import
statement (at any depth, in functions too, and ``import_module`` of a literal name) into the
tree's ``harness`` package: what the scorer executes, whether its fingerprint lists it or
not. ``compare`` pairs two trees' reaches by module name, the old names spelled at their new
homes (``--moved``), and holds them to the same syntax tree: the moved names respelled in
imports and in strings that name a reached module, and runs of imports taken in one order
only where that cannot matter (no ``__future__`` import, no name bound twice). Comments and
layout do not count; any other change does, and so does a module reached on one side only
(an old module left in place and still imported beside its moved copy), wherever either
tree's scorer fingerprint covers it. A reached module that no fingerprint covers (the
harness's own plumbing: how eras are computed, settings) is compared too, and a difference
there is reported as unproven, as the fingerprint never held it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

from harness.util.fs import TOOL_CACHES, in_tool_cache

PACKAGE = "harness"
SUITE = "suite:"  # the prefix of a suite file's key: its path in the suite folder

_MODULE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def is_module_name(name: str) -> bool:
    return _MODULE.fullmatch(name) is not None


def moved_name(name: str, moves: Mapping[str, str]) -> str:
    """``name`` with the longest moved module it starts with spelled at its new home."""
    for old in sorted(moves, key=len, reverse=True):
        if name == old or name.startswith(old + "."):
            return moves[old] + name[len(old) :]
    return name


# -- what a suite reaches -----------------------------------------------------------------


def reach(root: Path, suite_dir: Path) -> dict[str, Path]:
    """Every file the suite at ``suite_dir`` can execute in the tree at ``root``: the
    suite folder's Python files (key ``suite:<path>``) and each ``harness`` module an
    import reaches, with the packages around it (key: its module name)."""
    todo: list[tuple[str, Path]] = [
        (SUITE + p.relative_to(suite_dir).as_posix(), p)
        for p in sorted(suite_dir.rglob("*.py"))
        if not in_tool_cache(p, suite_dir)
    ]
    return _follow(root, suite_dir, todo)


def reach_modules(root: Path, names: Iterable[str]) -> dict[str, Path]:
    """The ``harness`` modules named that ``root`` holds, and all they reach (as ``reach``
    follows a suite's imports): the other tree's reach of one tree's suite."""
    return _follow(root, root, [(n, p) for name in names for n, p in _resolve(root, name)])


def _follow(root: Path, suite_dir: Path, todo: list[tuple[str, Path]]) -> dict[str, Path]:
    found: dict[str, Path] = {}
    while todo:
        key, path = todo.pop()
        if key in found:
            continue
        found[key] = path
        for name in _imported(key, path, suite_dir):
            todo += [(n, p) for n, p in _resolve(root, name) if n not in found]
    return found


def _imported(key: str, path: Path, suite_dir: Path) -> set[str]:
    """The ``harness`` modules a file names: absolute imports, relative imports of a
    harness module, ``import_module("harness...")``; a suite file's relative imports are
    its folder's files (``reach`` takes them all already)."""
    tree = parse(path.read_bytes(), path.name)
    package = key.split(".") if path.name == "__init__.py" else key.split(".")[:-1]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if key.startswith(SUITE):
                    continue
                base = package[: len(package) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            out.add(module)
            out.update(f"{module}.{a.name}" for a in node.names if a.name != "*")
        elif isinstance(node, ast.Call) and node.args and _imports_by_name(node.func):
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                out.add(arg.value)
    return {m for m in out if m == PACKAGE or m.startswith(PACKAGE + ".")}


def _imports_by_name(func: ast.expr) -> bool:
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name in ("import_module", "__import__")


def _resolve(root: Path, name: str) -> list[tuple[str, Path]]:
    """The files importing ``name`` executes: each package's ``__init__`` on the way and
    the module itself; none for a name that is an attribute, not a module."""
    out: list[tuple[str, Path]] = []
    parts = name.split(".")
    for depth in range(1, len(parts) + 1):
        module = ".".join(parts[:depth])
        if parts[depth - 1] in TOOL_CACHES:
            raise ValueError(f"{module} lies in a cache folder")
        base = root.joinpath(*parts[:depth])
        package = base / "__init__.py"
        found = package if package.is_file() else base.with_suffix(".py")
        stem = package.with_suffix("") if package.is_file() or base.is_dir() else base
        if any(stem.with_name(stem.name + s).is_file() for s in (*EXTENSION_SUFFIXES, ".pyc")):
            # Python would run compiled code there (before the source, or without one)
            raise ValueError(f"{module} is compiled code, not a source to compare")
        if not found.is_file():
            break  # an attribute of the module before it (or nothing)
        out.append((module, found))
    return out


# -- the same code -------------------------------------------------------------------------


def parse(source: bytes, name: str = "<file>") -> ast.Module:
    """The syntax tree of a file Python would compile (``compile`` also rejects what
    ``ast.parse`` lets through, a ``__future__`` import after code)."""
    try:
        compile(source, name, "exec", dont_inherit=True)
        return ast.parse(source, name)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise ValueError(f"{name} does not compile ({type(exc).__name__})") from exc


class _Respell(ast.NodeTransformer):
    """Moved module names at their new homes, in imports and in strings naming one."""

    def __init__(self, moves: Mapping[str, str], modules: Iterable[str]) -> None:
        self.moves = moves
        self.modules = set(modules)

    def visit_Import(self, node: ast.Import) -> ast.AST:
        for alias in node.names:
            alias.name = moved_name(alias.name, self.moves)
        return node

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.AST:
        if node.module and not node.level:
            node.module = moved_name(node.module, self.moves)
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        value = node.value
        if isinstance(value, str) and any(
            value == m or value.startswith(m + ".") for m in self.modules
        ):
            node.value = moved_name(value, self.moves)
        return node


class _SortImports(ast.NodeTransformer):
    """Each run of consecutive imports in one order, where the order cannot matter."""

    def generic_visit(self, node: ast.AST) -> ast.AST:
        super().generic_visit(node)
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if isinstance(stmts, list) and stmts and isinstance(stmts[0], ast.stmt):
                setattr(node, field, _sorted_runs(stmts))
        return node


def _sorted_runs(stmts: list[ast.stmt]) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    run: list[ast.stmt] = []
    for stmt in [*stmts, None]:
        if isinstance(stmt, ast.Import | ast.ImportFrom) and not _is_future(stmt):
            run.append(stmt)
            continue
        out += sorted(run, key=ast.dump) if _no_name_bound_twice(run) else run
        run = []
        if stmt is not None:
            out.append(stmt)
    return out


def _no_name_bound_twice(run: list[ast.stmt]) -> bool:
    """No name the run binds is bound to two things (``import a.b`` and ``import a.c`` both
    bind ``a`` to the package ``a``: one thing, so their order cannot matter)."""
    bound: dict[str, str] = {}
    for stmt in run:
        for alias in stmt.names:  # type: ignore[attr-defined]
            if isinstance(stmt, ast.ImportFrom):
                name, what = alias.asname or alias.name, f"{stmt.module}:{alias.name}"
            elif alias.asname:
                name, what = alias.asname, alias.name
            else:
                name = what = alias.name.split(".")[0]
            if bound.setdefault(name, what) != what:
                return False
    return True


def _is_future(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"


def canonical(
    source: bytes, moves: Mapping[str, str], modules: Iterable[str] = (), name: str = "<file>"
) -> str:
    """A Python file as compared: moved names respelled, import runs in one order."""
    tree = parse(source, name)
    try:
        tree = _SortImports().visit(_Respell(moves, modules).visit(tree))
        return ast.dump(tree)
    except RecursionError as exc:
        raise ValueError(f"{name} is nested too deep to compare") from exc


@dataclass(frozen=True)
class Comparison:
    """Why the reached code differs (``problems``: empty when it is the same code, modules
    moved) and which reached modules outside both trees' fingerprints differ (``unproven``:
    code no calibration ever covered, reported, never a reason to refuse)."""

    problems: list[str]
    unproven: list[str]


def compare(
    old: Mapping[str, Path],
    new: Mapping[str, Path],
    moves: Mapping[str, str],
    covered: Callable[[Path | None, str], bool],
) -> Comparison:
    """Pair two reaches by name (the old names moved) and compare each pair.
    ``covered(path, side)``: whether that side's fingerprint (``"then"``: the commit's,
    ``"now"``: the work tree's) lists the file. A difference in a module either side
    covers refuses; elsewhere it is only reported. What the commit's fingerprint covered
    must stay covered (a fingerprint that moved to a copy nobody runs covers nothing).
    Two modules may not move to one name; each move must name reached code."""

    def fingerprinted(_key: str, before: Path | None, after: Path | None) -> bool:
        return covered(before, "then") or covered(after, "now")

    problems = [
        f"--moved {a}={b}: {a if not _reached(a, old) else b} is not code the suite reaches"
        for a, b in moves.items()
        if not _reached(a, old) or not _reached(b, new)
    ]
    if problems:
        return Comparison(problems, [])
    renamed: dict[str, str] = {}
    for key in sorted(old):
        target = moved_name(key, moves)
        if target in renamed:
            problems.append(f"{renamed[target]} and {key}: both moved to {target}")
        renamed[target] = key
    if problems:
        return Comparison(problems, [])
    unproven: list[str] = []

    def differs(key: str, why: str, before: Path | None, after: Path | None) -> None:
        graded = key.startswith(SUITE) or fingerprinted(key, before, after)
        (problems if graded else unproven).append(f"{key}: {why}")

    for key in sorted(set(new) - set(renamed)):
        differs(key, "reached in the work tree only", old.get(key), new[key])
    for key in sorted(set(renamed) - set(new)):
        differs(renamed[key], "reached at the commit only", old[renamed[key]], new.get(key))
    for key in sorted(set(renamed) & set(new)):
        if covered(old[renamed[key]], "then") and not covered(new[key], "now"):
            problems.append(f"{key}: the commit's fingerprint covered it, the work tree's does not")
        before, after = old[renamed[key]].read_bytes(), new[key].read_bytes()
        try:
            same = before == after or canonical(before, moves, old, key) == canonical(
                after, {}, (), key
            )
        except ValueError as exc:
            problems.append(f"{key}: {exc}")
            continue
        if not same:
            why = "its code changed, not only where the modules it imports live"
            differs(key, why, old[renamed[key]], new[key])
    return Comparison(problems, unproven)


def _reached(module: str, found: Mapping[str, Path]) -> bool:
    return any(k == module or k.startswith(module + ".") for k in found)
