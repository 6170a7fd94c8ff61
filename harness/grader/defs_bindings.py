"""How a module-level value that compared code reads got its value, when that is not
written out in full.

The compare resolves each global a definition reads to what it denotes in the checker's
process: a constant by its value. A value computed at load (from the environment, the
command line, the interpreter, the folder the suite sits in, the hash seed, the time...)
can be equal there and differ in a scoring. So a read of a value bound by anything but a
literal also carries the statement that bound it, canonical (``Bound``): two trees are
the same only if they compute such a value the same way, whatever it came to here.

Aliases are followed to the binding they name, so a split may turn ``PAGES = V.PAGES``
into ``from .vendor import PAGES``: ``from .m import x``, ``x = y`` and ``x = m.y`` (a
suite module ``m``), and a tuple of them. A value no top-level statement of its module
binds (a module ``__getattr__``, a store from elsewhere) is ``Bound`` as such.
"""

from __future__ import annotations

import ast
import builtins
import importlib.util
import sys
import types
from collections.abc import Iterator
from types import ModuleType
from typing import Any, Protocol

from harness.grader.defs_ast import MISSING, Canon, Json


class Graph(Protocol):
    """What the bindings need of ``defs_graph.Graph``."""

    def suite_module(self, obj: object) -> bool: ...
    def suite_defined(self, obj: object) -> bool: ...
    def describe(self, obj: object) -> Json: ...
    def parsed_file(self, file: str) -> tuple[ast.Module, dict[int, Any]]: ...


_DEFINITION = (ModuleType, type, types.FunctionType, types.BuiltinFunctionType)
_SMALL_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod)


class Bindings:
    """The ``Bound`` entries of one graph (each module-level name looked up once)."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.done: dict[tuple[int, str], Json | None] = {}
        self.busy: set[tuple[int, str]] = set()

    def of(self, module: object, name: str) -> Json | None:
        """``["Bound", ...]`` for ``module.name`` read by compared code; None when the
        value is a definition or written out in full."""
        if not self.graph.suite_module(module):
            return None
        assert isinstance(module, ModuleType)
        value = getattr(module, name, MISSING)
        if value is MISSING or isinstance(value, _DEFINITION):
            return None
        if self.graph.suite_defined(value):
            return None
        key = (id(module), name)
        if key in self.done:
            return self.done[key]
        if key in self.busy:
            return ["Bound", "again", name]  # a binding that reads itself
        self.busy.add(key)
        try:
            got = self._find(module, name, value)
        finally:
            self.busy.discard(key)
        self.done[key] = got
        return got

    def _find(self, module: ModuleType, name: str, value: object) -> Json | None:
        tree, scopes = self.graph.parsed_file(str(module.__file__))
        found = [s for s in _top_level(tree.body) if name in _bound_names(s)]
        if not found:
            return ["Bound", "by no statement of its module"]
        if len(found) == 1:
            stmt = found[0]
            named = self._alias(module, stmt, name)
            if named is not None:
                return self.of(*named)
            if _literal(stmt, name):
                return None
            if isinstance(stmt, ast.ImportFrom):  # from outside the suite: that name of it
                (alias,) = [a for a in stmt.names if (a.asname or a.name) == name]
                return ["Bound", ["from", stmt.level, stmt.module, alias.name]]
        from harness.scoring import Suite

        if isinstance(value, Suite):  # which files its era lists: no grading
            found = [_without(s, "sources") for s in found]
        canon = Canon(scopes, _ModuleGlobals(self, module), in_function=False)
        return ["Bound", [canon.statement(_unannotated(s), scopes[id(tree)]) for s in found]]

    def _alias(self, module: ModuleType, stmt: ast.stmt, name: str) -> tuple[object, str] | None:
        """The (module, name) a binding only renames, if it does."""
        if isinstance(stmt, ast.ImportFrom):
            (alias,) = [a for a in stmt.names if (a.asname or a.name) == name]
            package = getattr(module, "__package__", None) or ""
            try:
                full = importlib.util.resolve_name("." * stmt.level + (stmt.module or ""), package)
            except (ImportError, ValueError):
                return None
            source = sys.modules.get(full)
            return (source, alias.name) if self.graph.suite_module(source) else None
        value = _assigned(stmt, name)
        if isinstance(value, ast.Name):
            return (module, value.id) if value.id != name else None
        if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name):
            base = vars(module).get(value.value.id, MISSING)
            return (base, value.attr) if self.graph.suite_module(base) else None
        return None


class _ModuleGlobals:
    """The resolver of a binding statement: the module's globals, reads carrying theirs."""

    def __init__(self, bindings: Bindings, module: ModuleType) -> None:
        self.bindings, self.module = bindings, module

    def lookup(self, name: str) -> object:
        ns = vars(self.module)
        return ns[name] if name in ns else getattr(builtins, name, MISSING)

    def describe(self, obj: object) -> Json:
        return self.bindings.graph.describe(obj)

    def binding(self, name: str) -> Json | None:
        return self.bindings.of(self.module, name)

    def attr_binding(self, module: object, name: str) -> Json | None:
        return self.bindings.of(module, name)


def _without(stmt: ast.stmt, keyword: str) -> ast.stmt:
    """``stmt`` with ``keyword=`` left out of the call it assigns (a copy)."""
    value = getattr(stmt, "value", None)
    if not isinstance(value, ast.Call):
        return stmt
    call = ast.Call(value.func, value.args, [k for k in value.keywords if k.arg != keyword])
    copy = ast.Assign(targets=getattr(stmt, "targets", None) or [stmt.target], value=call)  # type: ignore[attr-defined]
    return ast.fix_missing_locations(ast.copy_location(copy, stmt))


def _unannotated(stmt: ast.stmt) -> ast.stmt:
    """``x: T = v`` as ``x = v`` (whether ``T`` runs is the load's effects' business)."""
    if isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        return ast.copy_location(ast.Assign(targets=[stmt.target], value=stmt.value), stmt)
    return stmt


def _top_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The module's statements, those inside a top-level block (``if``, ``try``, ``with``,
    a loop) included; a definition's body is its own scope."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list):
                yield from _top_level(inner)
        for handler in getattr(stmt, "handlers", []):
            yield from _top_level(handler.body)


def _bound_names(stmt: ast.stmt) -> set[str]:
    """The names a statement binds at its own level (not inside a nested block)."""
    if isinstance(stmt, ast.Import | ast.ImportFrom):
        return {(a.asname or a.name).split(".")[0] for a in stmt.names}
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {stmt.name}
    targets: list[ast.AST] = []
    if isinstance(stmt, ast.Assign):
        targets = list(stmt.targets)
    elif isinstance(stmt, ast.AnnAssign | ast.AugAssign):
        targets = [stmt.target] if getattr(stmt, "value", True) is not None else []
    elif isinstance(stmt, ast.For):
        targets = [stmt.target]
    elif isinstance(stmt, ast.With):
        targets = [i.optional_vars for i in stmt.items if i.optional_vars is not None]
    names = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    if isinstance(stmt, ast.Expr | ast.Assign | ast.AnnAssign | ast.AugAssign):
        # a walrus anywhere in the statement binds at module level too
        names |= {n.target.id for n in ast.walk(stmt) if isinstance(n, ast.NamedExpr)}
    return names


def _assigned(stmt: ast.stmt, name: str) -> ast.expr | None:
    """The expression a plain assignment gives ``name`` (element-wise for tuples)."""
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        return stmt.value
    if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
        return None
    target, value = stmt.targets[0], stmt.value
    if isinstance(target, ast.Name):
        return value if target.id == name else None
    if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple):
        if len(target.elts) != len(value.elts):
            return None
        for t, v in zip(target.elts, value.elts, strict=True):
            if isinstance(t, ast.Name) and t.id == name:
                return v
    return None


def _literal(stmt: ast.stmt, name: str) -> bool:
    """``name`` is given a value written out in full: a constant, or displays, signs and
    small arithmetic of constants (a set display is not: its order is the hash seed's)."""
    value = _assigned(stmt, name)
    return value is not None and _written_out(value)


def _written_out(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Tuple | ast.List):
        return all(_written_out(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        keys: list[Any] = node.keys
        return all(k is not None and _written_out(k) for k in keys) and all(
            _written_out(v) for v in node.values
        )
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, ast.USub | ast.UAdd) and _written_out(node.operand)
    if isinstance(node, ast.BinOp):
        ok = isinstance(node.op, _SMALL_OPS)
        return ok and _written_out(node.left) and _written_out(node.right)
    return False
