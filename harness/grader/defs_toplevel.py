"""What a suite's modules do at load besides defining things: the effects compared.

Each top-level statement of each suite module the load ran is one of:

- *inert*, left out: a docstring; an import (a suite module it runs is itself compared; a
  module from outside imported first by the load is listed in ``imported`` and compared);
  an assignment of a *pure* expression (its value reaches the compare through every read
  of the name); an ``assert`` of a pure expression (it held: the load went on); an ``if``
  on ``TYPE_CHECKING`` (never runs) or on a pure test with inert branches; an undecorated
  function, or a class with no decorator, keywords or impure body, whose defaults are pure
  (defining it runs nothing; if anything reachable uses it, it is compared there);
- *plumbing*, left out: how a package declares its path (``__path__``, ``__package__``,
  ``__spec__.submodule_search_locations``), and the loader helpers the meridian suites
  used before they were packages: ``V = _load("vendor")`` where ``_load`` only calls the
  import machinery (``importlib.util`` and ``exec_module``, ``sys.modules``), and a
  ``bind(...)`` that only sets globals of its own module to its parameters, each left
  bound to a suite module (every read of those names is then resolved to the module);
- an *effect*: anything else (a decorated definition, a call, a loop, a ``try``...),
  described with its names resolved and compared, as a multiset, with the other tree's.

*Pure*: constants, names (but a suite function, class or instance), attribute and
subscript reads, displays, operators, f-strings, and calls of a fixed set of constructors
and methods of values (``PURE_CALLABLES``, ``PURE_METHODS``) whose arguments are pure.

A pure assignment's value is compared by what it is in the checker's process, so a pure
expression must have the same value in every process that loads the same tree. What could
differ is never pure, whatever it is called: a value read from a module outside the suite
(``os.environ``, ``sys.argv``, ``sys.executable``, a library's setting; its modules,
classes and functions stay pure: what they are is compared by home, and a call of one is
pure only if it is in the fixed set), a name imported from one (``from os import environ``),
and a question to the file system about a path outside the suite's folder (``exists``,
``glob``...). Such a statement is an effect: compared as written, with its names resolved.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import datetime
import functools
import importlib.util
import pathlib
import re
import sys
import types
import typing
import zoneinfo
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from harness.grader.defs_ast import MISSING, MODULE_DUNDERS, Canon, Json
from harness.grader.defs_graph import Globals
from harness.grader.defs_reflection import annotation_runs_code

if TYPE_CHECKING:
    from harness.grader.defs_graph import Graph

_METHODS = (
    "resolve with_name with_suffix joinpath as_posix format join split rsplit strip "
    "lstrip rstrip lower upper replace encode decode startswith endswith splitlines "
    "items keys values copy get"
)  # not ``format``: its fields read attributes and items named inside the string
_FILE_SYSTEM = frozenset({"is_file", "is_dir", "exists", "glob"})  # pure in the suite only
PURE_METHODS = frozenset(_METHODS.split()) | _FILE_SYSTEM
_PLUMBING_NAMES = frozenset({"__path__", "__package__", "__all__"})
_MODULE_HOOKS = frozenset({"__getattr__", "__dir__"})


def pure_callables() -> set[int]:
    """Identities of the callables a pure expression may call (they have no effect)."""
    from harness.scoring import Suite

    names = (
        "str int float bool bytes tuple list dict set frozenset range len abs min max sum "
        "sorted round repr isinstance enumerate zip reversed divmod pow chr ord"
    )
    found: list[object] = [getattr(builtins, n) for n in names.split()]
    found += [pathlib.Path, pathlib.PurePath, pathlib.PurePosixPath, re.compile,
              dataclasses.field, typing.TypeVar, typing.NewType, typing.cast,
              datetime.timedelta, datetime.date, datetime.datetime, datetime.timezone,
              functools.partial, zoneinfo.ZoneInfo, Suite]  # fmt: skip
    return {id(f) for f in found}


_LOADER_CALLS = ("spec_from_file_location", "module_from_spec")


class Module:
    """The top-level statements of one suite module, classified."""

    def __init__(self, graph: Graph, module: ModuleType) -> None:
        self.graph = graph
        self.ns = vars(module)
        file = str(module.__file__)
        self.tree, self.scopes = graph.parsed_file(file)
        self.table = self.scopes[id(self.tree)]
        self.name = Path(file).name
        self.canon = Canon(self.scopes, Globals(graph, self.ns), in_function=False)
        self.pure_ids = pure_callables()

    def effects(self) -> list[Json]:
        out: list[Json] = []
        for stmt in self.tree.body:
            out += self.classify(stmt)
        return out

    def classify(self, stmt: ast.stmt) -> list[Json]:
        if self.inert(stmt) or self.plumbing(stmt):
            return []
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return [["def", self.graph.describe(self.ns.get(stmt.name))]]
        return [["stmt", self.canon.statement(stmt, self.table)]]

    # -- inert ---------------------------------------------------------------------------

    def inert(self, stmt: ast.stmt, in_class: bool = False) -> bool:
        """Defines, and does nothing else. A module-level value need not be the same in
        every process (a read of it carries how it was bound: ``defs_bindings``); a class
        attribute's must, and so must a test that picks the branch that binds."""
        if isinstance(stmt, ast.Expr):
            return isinstance(stmt.value, ast.Constant)
        if isinstance(stmt, ast.Import | ast.ImportFrom | ast.Pass):
            return True
        if isinstance(stmt, ast.Assign):
            return all(_binds_names(t) for t in stmt.targets) and self.pure(stmt.value, in_class)
        if isinstance(stmt, ast.AnnAssign):
            return (
                isinstance(stmt.target, ast.Name)
                and (stmt.value is None or self.pure(stmt.value, in_class))
                and (self.future_annotations or self.pure(stmt.annotation))
            )
        if isinstance(stmt, ast.Assert):  # it held here; elsewhere it holds or the load fails
            return self.pure(stmt.test, anywhere=False) and (
                stmt.msg is None or self.pure(stmt.msg, anywhere=False)
            )
        if isinstance(stmt, ast.If):
            spelled = getattr(stmt.test, "id", getattr(stmt.test, "attr", None))
            if spelled == "TYPE_CHECKING" and self.obj(stmt.test) is False and not stmt.orelse:
                return True  # never runs
            branches = [*stmt.body, *stmt.orelse]
            binds = not all(self.plumbing(s) for s in branches)  # not only a path's plumbing
            return self.pure(stmt.test, anywhere=binds) and all(
                self.inert(s, in_class) or self.plumbing(s) for s in branches
            )
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            if stmt.name in _MODULE_HOOKS:
                return False  # answers attribute reads of the module: compared, as defined
            return not stmt.decorator_list and self._pure_args(stmt.args)
        if isinstance(stmt, ast.ClassDef):
            made = self.ns.get(stmt.name)
            plain = isinstance(made, type) and type(made) is type  # no metaclass runs code
            return (
                plain
                and not stmt.decorator_list
                and not stmt.keywords
                and all(self.pure(b) for b in stmt.bases)
                and all(self._class_inert(s) for s in stmt.body)
            )
        return False

    @functools.cached_property
    def future_annotations(self) -> bool:
        return any(
            isinstance(s, ast.ImportFrom)
            and s.module == "__future__"
            and any(a.name == "annotations" for a in s.names)
            for s in self.tree.body
        )

    def _class_inert(self, stmt: ast.stmt) -> bool:
        if isinstance(stmt, ast.AnnAssign) and annotation_runs_code(stmt.annotation):
            return False  # a library may evaluate it (a dataclass's, pydantic's)
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            simple = (property, staticmethod, classmethod, functools.cached_property)
            return all(self.obj(d) in simple for d in stmt.decorator_list) and self._pure_args(
                stmt.args
            )
        return self.inert(stmt, in_class=True)

    def _pure_args(self, args: ast.arguments) -> bool:
        parts = [*args.defaults, *[d for d in args.kw_defaults if d is not None]]
        if not self.future_annotations:
            parts += [a.annotation for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]
                      if a.annotation is not None]  # fmt: skip
        return all(self.pure(p) for p in parts)

    @functools.cached_property
    def imported_from_outside(self) -> frozenset[str]:
        """Names this module binds by ``from M import name`` of a module outside the suite
        (an absolute import that does not land on a suite module)."""
        out: set[str] = set()
        for stmt in ast.walk(self.tree):
            if isinstance(stmt, ast.ImportFrom) and stmt.level == 0 and stmt.module:
                if self.graph.suite_module(sys.modules.get(stmt.module)):
                    continue
                out |= {a.asname or a.name for a in stmt.names}
        return frozenset(out)

    def in_suite_path(self, node: ast.expr) -> bool:
        """A name (or module attribute) bound to a path in the suite's folder."""
        value = self.obj(node)
        if not isinstance(value, pathlib.PurePath):
            return False
        return pathlib.Path(value).resolve().is_relative_to(self.graph.suite_dir)

    def obj(self, node: ast.expr) -> object:
        """What a name, or an attribute chain through modules from one, denotes now."""
        if isinstance(node, ast.Name):
            if node.id in self.ns:
                return self.ns[node.id]
            return getattr(builtins, node.id, MISSING)
        if isinstance(node, ast.Attribute):
            base = self.obj(node.value)
            if isinstance(base, ModuleType) and self.graph.suite_module(base):
                return vars(base).get(node.attr, MISSING)  # never a module __getattr__
            if isinstance(base, ModuleType):
                return getattr(base, node.attr, MISSING)
        return MISSING

    def pure(self, node: ast.AST | None, anywhere: bool = True) -> bool:
        """No effect, and (``anywhere``) the same value in every process that loads the
        same tree."""
        if node is None or isinstance(node, ast.Constant):
            return True
        if isinstance(node, ast.Name):
            value = self.obj(node)
            if anywhere and _process_dependent(node.id, self.ns, value):
                return False
            foreign = node.id in self.imported_from_outside and _data(value)
            return not (anywhere and foreign) and not self.graph.suite_defined(value)
        if isinstance(node, ast.Attribute):
            base, value = self.obj(node.value), self.obj(node)
            foreign = isinstance(base, ModuleType) and not self.graph.suite_module(base)
            if anywhere and foreign and _data(value):
                return False  # a value from outside the suite: this process's
            if isinstance(base, ModuleType) and not foreign and value is MISSING:
                return False  # a suite module's name no statement bound (its __getattr__)
            return self.pure(node.value, anywhere) and not self.graph.suite_defined(value)
        if isinstance(node, ast.Call):
            func = node.func
            fixed = id(self.obj(func)) in self.pure_ids
            method = isinstance(func, ast.Attribute) and func.attr in PURE_METHODS
            if anywhere and method and func.attr in _FILE_SYSTEM:  # type: ignore[attr-defined]
                method = self.in_suite_path(func.value)  # type: ignore[attr-defined]
            callee_ok = fixed or (
                method and self.pure(func.value, anywhere)  # type: ignore[attr-defined]
            )
            return (
                callee_ok
                and all(self.pure(a, anywhere) for a in node.args)
                and all(self.pure(k.value, anywhere) for k in node.keywords)
            )
        if anywhere and isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
            return False  # a power can be made too large to print in another process
        simple = (ast.Tuple, ast.List, ast.Set, ast.Dict, ast.BinOp, ast.UnaryOp, ast.BoolOp,
                  ast.Compare, ast.Subscript, ast.Slice, ast.JoinedStr, ast.FormattedValue,
                  ast.IfExp, ast.Starred, ast.keyword, ast.ListComp, ast.SetComp,
                  ast.DictComp, ast.GeneratorExp, ast.comprehension)  # fmt: skip
        if isinstance(node, simple):
            parts = (ast.expr, ast.comprehension)  # a comprehension's iterables and tests
            kids = (c for c in ast.iter_child_nodes(node) if isinstance(c, parts))
            return all(self.pure(c, anywhere) for c in kids)
        return False

    # -- plumbing ------------------------------------------------------------------------

    def plumbing(self, stmt: ast.stmt) -> bool:
        if isinstance(stmt, ast.Assign) and all(
            isinstance(t, ast.Name) and t.id in _PLUMBING_NAMES for t in stmt.targets
        ):
            return self.pure(stmt.value)
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Attribute)
            and stmt.targets[0].attr == "submodule_search_locations"
            and isinstance(stmt.targets[0].value, ast.Name)
            and stmt.targets[0].value.id == "__spec__"
        ):
            return self.pure(stmt.value)
        if isinstance(stmt, ast.Assign | ast.Expr) and isinstance(stmt.value, ast.Call):
            return self._module_plumbing(stmt)
        return False

    def _module_plumbing(self, stmt: ast.Assign | ast.Expr) -> bool:
        """``V = _load("vendor")`` or ``S.bind(B, D, V)`` (see the module's docstring)."""
        call = stmt.value
        assert isinstance(call, ast.Call)
        fn = self.obj(call.func)
        if not self.graph.suite_function(fn) or not all(self.pure(a) for a in call.args):
            return False
        if call.keywords:
            return False
        targets = stmt.targets if isinstance(stmt, ast.Assign) else []
        names = [n for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
        if not all(self.graph.suite_module(self.ns.get(n.id)) for n in names):
            return False
        if any(not isinstance(n, ast.Name | ast.Tuple | ast.Store) for t in targets
               for n in ast.walk(t)):  # fmt: skip
            return False
        node = self._node_of(fn)
        return node is not None and (
            (bool(names) and self._loader(node, fn)) or (not names and self._binder(node, fn))
        )

    def _node_of(self, fn: Any) -> ast.FunctionDef | None:
        tree, _ = self.graph.parsed_file(fn.__code__.co_filename)
        for node in tree.body:  # a module-level helper only
            if (
                isinstance(node, ast.FunctionDef)
                and node.name == fn.__name__
                and not node.decorator_list
                and node.lineno == fn.__code__.co_firstlineno
            ):
                return node
        return None

    def _loader(self, node: ast.FunctionDef, fn: Any) -> bool:
        """Calls only the import machinery; stores only locals and ``sys.modules`` items."""
        allowed = {id(getattr(importlib.util, n)) for n in _LOADER_CALLS}
        allowed |= {id(abs), id(hash), id(str)}
        env = fn.__globals__
        local = {a.arg for a in node.args.args}
        local |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name)
                  and isinstance(n.ctx, ast.Store)}  # fmt: skip
        for sub in ast.walk(node):
            if isinstance(sub, ast.Global | ast.Nonlocal | ast.Delete | ast.AugAssign):
                return False
            if isinstance(sub, ast.Call):
                target = _chain(sub.func, env, local)
                if id(target) not in allowed and not (
                    isinstance(sub.func, ast.Attribute) and sub.func.attr == "exec_module"
                ):
                    return False
            if isinstance(sub, ast.Assign):
                for t in sub.targets:
                    ok = isinstance(t, ast.Name) or (
                        isinstance(t, ast.Subscript) and _chain(t.value, env, local) is sys.modules
                    )
                    if not ok:
                        return False
        return True

    def _binder(self, node: ast.FunctionDef, fn: Any) -> bool:
        """Only ``global`` and ``NAMES = PARAMETERS``, each name left bound to a suite module."""
        params = {a.arg for a in node.args.args}
        declared: set[str] = set()
        body = node.body[1:] if node.body and isinstance(node.body[0], ast.Expr) else node.body
        for stmt in body:
            if isinstance(stmt, ast.Global):
                declared |= set(stmt.names)
            elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                got = [n.id for n in _names(stmt.targets[0])]
                given = [n.id for n in _names(stmt.value)]
                if not set(got) <= declared or not set(given) <= params or len(got) != len(given):
                    return False
                if not all(self.graph.suite_module(fn.__globals__.get(n)) for n in got):
                    return False
            else:
                return False
        return True


def _process_dependent(name: str, ns: dict[str, Any], value: object) -> bool:
    """Where or how the module was loaded (``__file__``, ``__name__``...), or a built-in
    value that the interpreter's options set (``__debug__``, ``exit`` without ``site``)."""
    if name in MODULE_DUNDERS or name == "__builtins__":
        return True
    return name not in ns and not isinstance(value, type | types.BuiltinFunctionType)


def _data(value: object) -> bool:
    """A value, not a module, class or function (what those are is compared by home)."""
    return value is not MISSING and not isinstance(value, ModuleType | type) and not callable(value)


def _binds_names(target: ast.expr) -> bool:
    """A target that binds names only (``a``, ``a, *b``), no attribute or item."""
    if isinstance(target, ast.Tuple):
        return all(_binds_names(e) for e in target.elts)
    if isinstance(target, ast.Starred):
        return _binds_names(target.value)
    return isinstance(target, ast.Name)


def _names(node: ast.expr) -> list[ast.Name]:
    if isinstance(node, ast.Name):
        return [node]
    if isinstance(node, ast.Tuple):
        return [n for e in node.elts for n in _names(e)]
    return [ast.Name(id="<not a name>")]


def _chain(node: ast.expr, env: dict[str, Any], local: set[str]) -> object:
    if isinstance(node, ast.Name):
        if node.id in local:
            return MISSING
        return env.get(node.id, getattr(builtins, node.id, MISSING))
    if isinstance(node, ast.Attribute):
        base = _chain(node.value, env, local)
        if isinstance(base, ModuleType):
            return getattr(base, node.attr, MISSING)
    return MISSING


def load_effects(graph: Graph, modules: Iterable[ModuleType]) -> list[Json]:
    """Every suite module's effects, in an order of the files' names (the compare takes
    them as a multiset)."""
    out: list[Json] = []
    for module in sorted(modules, key=lambda m: str(m.__file__)):
        out += Module(graph, module).effects()
    return out
