"""A definition's syntax tree as the definition-level carry compares it (pure logic).

``Canon`` turns an ``ast`` node into JSON-able lists (``[node type, *fields]``) in which
every *global* name reference is replaced by what the name denotes at run time (the
``Resolver`` says: a suite definition as a graph reference, a constant by its value, an
object from outside the suite by its home), so a name spelled differently but bound to the
same thing compares equal, and the same spelling bound to something else does not.
Scopes come from ``symtable`` (the compiler's own): locals, parameters, free variables and
comprehension variables are kept as written. Every call is compared as written,
``typing.cast(T, x)`` included (``T`` is evaluated each time it runs).

What is left out, and why it cannot change what the code does:

- annotations of parameters and returns, and of local variables (``x: T = v`` is
  ``x = v``; a bare ``x: T`` in a function does nothing at run time; its only effect,
  making ``x`` local, shows in how every other ``x`` is resolved): a function's
  annotations are never evaluated under ``from __future__ import annotations`` and are
  read by no grading code;
- docstrings of functions and classes (``__doc__``): a definition whose code reads a
  ``__doc__`` is refused instead (``reads_doc``);
- the default values of the outermost function (its run-time ``__defaults__`` are
  compared instead, by value), and source positions, comments and layout.
"""

from __future__ import annotations

import ast
import json
import symtable
import typing
from collections.abc import Iterator, Sequence
from typing import Any, Protocol

from harness.grader.defs_reflection import (
    LISTING,
    annotation_runs_code,
    annotations_of,
    constant_identity,
    metadata,
    reflection,
)

Json = Any
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, *_COMPREHENSIONS)
_TABLE_NAMES = {
    ast.Lambda: "lambda",
    ast.ListComp: "listcomp",
    ast.SetComp: "setcomp",
    ast.DictComp: "dictcomp",
    ast.GeneratorExp: "genexpr",
}
MISSING = object()
MODULE_DUNDERS = frozenset(
    {"__file__", "__name__", "__spec__", "__cached__", "__loader__", "__package__", "__doc__"}
)


class Refused(Exception):
    """The definition cannot be proved the same (the message names why)."""


class Resolver(Protocol):
    """What the run time says about global names (of one module's globals)."""

    def lookup(self, name: str) -> object:
        """The object a global name denotes (``MISSING``: unbound)."""

    def describe(self, obj: object) -> Json:
        """The canonical description of an object."""

    def binding(self, name: str) -> Json | None:
        """How a global name's value was computed, when not written out in full."""

    def attr_binding(self, module: object, name: str) -> Json | None:
        """The same for a module's attribute."""


def scope_map(tree: ast.Module, source: str, filename: str) -> dict[int, symtable.SymbolTable]:
    """Each scope node of ``tree`` (by ``id``) with the compiler's symbol table for it."""
    top = symtable.symtable(source, filename, "exec")
    found: dict[int, symtable.SymbolTable] = {id(tree): top}
    _pair(region(tree), top, found)
    return found


def _pair(parts: list[ast.AST], table: symtable.SymbolTable, found: dict[int, Any]) -> None:
    kids = [n for node in parts for n in _direct_scopes(node)]
    tables = list(table.get_children())
    used: set[int] = set()
    for node in sorted(kids, key=lambda n: (n.lineno, n.col_offset)):  # type: ignore[attr-defined]
        name = _TABLE_NAMES.get(type(node), getattr(node, "name", ""))
        match = next(
            (
                i
                for i, t in enumerate(tables)
                if i not in used and t.get_name() == name and t.get_lineno() == node.lineno  # type: ignore[attr-defined]
            ),
            None,
        )
        if match is None:
            raise Refused(f"no symbol table for {name} at line {node.lineno}")  # type: ignore[attr-defined]
        used.add(match)
        found[id(node)] = tables[match]
        _pair(region(node), tables[match], found)


def region(node: ast.AST) -> list[ast.AST]:
    """The parts of a scope node that run in its own scope."""
    if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return list(node.body)
    if isinstance(node, ast.Lambda):
        return [node.body]
    if isinstance(node, _COMPREHENSIONS):
        first, *rest = node.generators
        parts: list[ast.AST] = [first.target, *first.ifs]
        for gen in rest:
            parts += [gen.target, gen.iter, *gen.ifs]
        elts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        return [*parts, *elts]
    return []


def outer_parts(node: ast.AST) -> list[ast.AST]:
    """The parts of a scope node evaluated in the enclosing scope."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
        args = node.args
        outer: list[ast.AST] = [*args.defaults, *[d for d in args.kw_defaults if d]]
        if not isinstance(node, ast.Lambda):
            outer += node.decorator_list
        return outer
    if isinstance(node, ast.ClassDef):
        return [*node.decorator_list, *node.bases, *node.keywords]
    if isinstance(node, _COMPREHENSIONS):
        return [node.generators[0].iter]
    return []


def _direct_scopes(node: ast.AST) -> Iterator[ast.AST]:
    if isinstance(node, _SCOPES):
        yield node
        for part in outer_parts(node):
            yield from _direct_scopes(part)
        return
    for child in ast.iter_child_nodes(node):
        yield from _direct_scopes(child)


def _is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


class Canon:
    """Canonical JSON of definitions of one module (see the module's docstring).

    ``in_function``: stores to a global name or to a module's attribute are refused (code
    that runs while grading may not rebind module state: the compare resolves every read
    to the value the load left); at module level they are kept, as written."""

    def __init__(
        self, scopes: dict[int, symtable.SymbolTable], resolver: Resolver, in_function: bool
    ) -> None:
        self.scopes = scopes
        self.resolver = resolver
        self.in_function = in_function
        self.reads_doc = False

    # -- entry points ------------------------------------------------------------------

    def function(self, node: ast.AST, outer: symtable.SymbolTable) -> Json:
        """A function as defined: decorators (in ``outer``), parameters, body; the
        parameters' defaults left to the run-time values."""
        if isinstance(node, ast.Lambda):
            return [
                "Lambda",
                self._args(node.args, outer, defaults=False),
                self._in(node, node.body),
            ]
        assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        return [
            type(node).__name__,
            node.name,
            self._args(node.args, outer, defaults=False),
            self._body(node, node.body),
            [self.conv(d, outer) for d in node.decorator_list],
            *self._running(annotations_of(node.args, node.returns)),
        ]

    def _running(self, annotations: Sequence[ast.expr | None]) -> list[Json]:
        """Annotations that run code when evaluated, as written (the rest only name types
        and are left out: see ``defs_reflection``)."""
        running = [ast.unparse(a) for a in annotations if a is not None and annotation_runs_code(a)]
        return [["RunningAnnotations", running]] if running else []

    def class_body(self, node: ast.ClassDef, outer: symtable.SymbolTable) -> Json:
        """A class statement: decorators, bases and keywords (in ``outer``), and its body
        with each method as its name and decorators (methods compare by their objects)."""
        table = self.scopes[id(node)]
        body: list[Json] = []
        for stmt in node.body[1:] if node.body and _is_docstring(node.body[0]) else node.body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                body.append(["def", stmt.name, [self.conv(d, table) for d in stmt.decorator_list]])
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                value = None if stmt.value is None else self.conv(stmt.value, table)
                body.append(["ann", stmt.target.id, value, *self._running([stmt.annotation])])
            else:
                body.append(self.conv(stmt, table))
        return [
            node.name,
            [self.conv(d, outer) for d in node.decorator_list],
            [self.conv(b, outer) for b in node.bases],
            [self.conv(k, outer) for k in node.keywords],
            body,
        ]

    def statement(self, node: ast.stmt, table: symtable.SymbolTable) -> Json:
        return self.conv(node, table)

    # -- the walk ----------------------------------------------------------------------

    def _in(self, scope: ast.AST, node: ast.AST) -> Json:
        return self.conv(node, self.scopes[id(scope)])

    def _body(self, scope: ast.AST, body: list[ast.stmt]) -> Json:
        table = self.scopes[id(scope)]
        stmts = body[1:] if body and _is_docstring(body[0]) else body
        return self._stmts(stmts, table)

    def _stmts(self, stmts: list[ast.stmt], table: symtable.SymbolTable) -> Json:
        out: list[Json] = []
        for stmt in stmts:
            got = self.conv(stmt, table)
            if got is not None:
                out.append(got)
        return out

    def _args(self, args: ast.arguments, outer: symtable.SymbolTable, defaults: bool) -> Json:
        names = [
            [a.arg for a in args.posonlyargs],
            [a.arg for a in args.args],
            args.vararg.arg if args.vararg else None,
            [a.arg for a in args.kwonlyargs],
            args.kwarg.arg if args.kwarg else None,
        ]
        if not defaults:
            return names
        return [
            *names,
            [self.conv(d, outer) for d in args.defaults],
            [None if d is None else self.conv(d, outer) for d in args.kw_defaults],
        ]

    def conv(self, node: Any, table: symtable.SymbolTable) -> Json:
        if isinstance(node, list):
            if node and isinstance(node[0], ast.stmt):
                return self._stmts(node, table)
            return [self.conv(n, table) for n in node]
        if not isinstance(node, ast.AST):
            return node if not isinstance(node, float | complex | bytes) else repr(node)
        handler = getattr(self, "_" + type(node).__name__, None)
        if handler is not None:
            return handler(node, table)
        return self._generic(node, table)

    def _generic(self, node: ast.AST, table: symtable.SymbolTable) -> Json:
        fields = [f for f in node._fields if f not in ("type_comment", "kind")]
        return [type(node).__name__, *[self.conv(getattr(node, f, None), table) for f in fields]]

    # scopes nested in the definition

    def _FunctionDef(self, node: ast.FunctionDef, table: symtable.SymbolTable) -> Json:
        return [
            type(node).__name__,
            node.name,
            self._args(node.args, table, defaults=True),
            self._body(node, node.body),
            [self.conv(d, table) for d in node.decorator_list],
        ]

    _AsyncFunctionDef = _FunctionDef

    def _Lambda(self, node: ast.Lambda, table: symtable.SymbolTable) -> Json:
        return ["Lambda", self._args(node.args, table, defaults=True), self._in(node, node.body)]

    def _ClassDef(self, node: ast.ClassDef, table: symtable.SymbolTable) -> Json:
        inner = self.scopes[id(node)]
        return [
            "ClassDef",
            node.name,
            [self.conv(b, table) for b in node.bases],
            [self.conv(k, table) for k in node.keywords],
            self._stmts(
                node.body[1:] if node.body and _is_docstring(node.body[0]) else node.body, inner
            ),
            [self.conv(d, table) for d in node.decorator_list],
        ]

    def _comprehension(self, node: Any, table: symtable.SymbolTable) -> Json:
        inner = self.scopes[id(node)]
        first, *rest = node.generators
        gens = [[self.conv(first.target, inner), self.conv(first.iter, table),
                 self.conv(first.ifs, inner), first.is_async]]  # fmt: skip
        gens += [[self.conv(g.target, inner), self.conv(g.iter, inner), self.conv(g.ifs, inner),
                  g.is_async] for g in rest]  # fmt: skip
        elts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        return [type(node).__name__, gens, [self.conv(e, inner) for e in elts]]

    _ListComp = _SetComp = _DictComp = _GeneratorExp = _comprehension

    # annotations

    def _AnnAssign(self, node: ast.AnnAssign, table: symtable.SymbolTable) -> Json:
        if table.get_type() != "function":
            # at module or class level an annotation is recorded (and evaluated without
            # the __future__ import): kept, as the statement's classifier decides
            target, value = self.conv(node.target, table), self.conv(node.value, table)
            return ["AnnAssign", target, value, *self._running([node.annotation])]
        if node.value is None:
            if isinstance(node.target, ast.Name):
                return None  # does nothing at run time (``x`` is local: see its reads)
            # the target is evaluated but its last step (``a.b``: ``a``; ``a[i]``: ``a``, ``i``)
            parts = [node.target.value]
            if isinstance(node.target, ast.Subscript):
                parts.append(node.target.slice)
            return ["Expr", *[self.conv(p, table) for p in parts]]
        return ["Assign", [self.conv(node.target, table)], self.conv(node.value, table)]

    # names

    def _Name(self, node: ast.Name, table: symtable.SymbolTable) -> Json:
        if not self._is_global(node.id, table):
            return ["Name", node.id, type(node.ctx).__name__]
        if isinstance(node.ctx, ast.Load):
            return self._denoted(node.id)
        if self.in_function:
            raise Refused(f"it rebinds the module global {node.id!r} while grading")
        return ["GlobalStore", node.id, type(node.ctx).__name__]

    def _is_global(self, name: str, table: symtable.SymbolTable) -> bool:
        if table.get_type() == "module":
            return True
        try:
            sym = table.lookup(name)
        except KeyError:
            return True  # not seen by the compiler in this scope: looked up globally
        if table.get_type() == "class":
            return not sym.is_local() and not sym.is_free()
        return sym.is_global()

    def _Call(self, node: ast.Call, table: symtable.SymbolTable) -> Json:
        if self.in_function:
            self._refuse_reflection(node, table)
        return self._generic(node, table)

    def _refuse_reflection(self, node: ast.Call, table: symtable.SymbolTable) -> None:
        func = self._object(node.func, table)
        what = reflection(func)
        if what is not None:
            raise Refused(f"it reflects on the code ({what})")
        first = self._object(node.args[0], table) if node.args else MISSING
        module_arg = isinstance(first, type(typing))
        if func in (vars, dir) and (not node.args or module_arg):
            raise Refused(f"it reflects on the code ({func.__name__} of a namespace)")
        named = node.func.attr if isinstance(node.func, ast.Attribute) else None
        named = named or getattr(func, "__name__", None)
        if named in LISTING:
            seen = [self.conv(node.func, table), self.conv(node.args, table)]
            if "<tree>" in json.dumps(seen):  # the scenario's folders, the suite's among them
                raise Refused("it lists a folder of the scenario (a restructure changes its files)")
        computed = len(node.args) >= 2 and not isinstance(node.args[1], ast.Constant)
        if func in (getattr, hasattr) and computed and module_arg:
            raise Refused("it reads a module's global by a name it computes")

    def _Compare(self, node: ast.Compare, table: symtable.SymbolTable) -> Json:
        out = self._generic(node, table)
        identity = any(isinstance(op, ast.Is | ast.IsNot) for op in node.ops)
        sides = [node.left, *node.comparators]
        if self.in_function and identity and constant_identity(self.conv(sides, table)):
            raise Refused("it asks if a constant is the same object (the compiler decides)")
        return out

    def _denoted(self, name: str) -> Json:
        if name in MODULE_DUNDERS and not self.in_function:
            # where and how this module was loaded: the same words in every module of a
            # load-time statement; what the statement binds is compared where it is read
            return ["Dunder", name]
        obj = self.resolver.lookup(name)
        if obj is MISSING:
            return ["Unbound", name]
        bound = self.resolver.binding(name)
        return ["Global", self.resolver.describe(obj), *([bound] if bound else [])]

    def _object(self, node: ast.expr, table: symtable.SymbolTable) -> object:
        """The object a global name, or an attribute chain through modules from one,
        denotes (``MISSING``: not such a chain)."""
        if isinstance(node, ast.Name) and self._is_global(node.id, table):
            return self.resolver.lookup(node.id)
        if isinstance(node, ast.Attribute):
            base = self._object(node.value, table)
            if isinstance(base, type(typing)):
                return getattr(base, node.attr, MISSING)
        return MISSING

    def _Attribute(self, node: ast.Attribute, table: symtable.SymbolTable) -> Json:
        if node.attr == "__doc__":
            self.reads_doc = True
        elif metadata(node.attr) and self.in_function:
            raise Refused(f"it reads {node.attr} (metadata a restructure may change)")
        base = self._object(node.value, table)
        if self.in_function and isinstance(base, type(typing)):
            what = reflection(getattr(base, node.attr, None))
            if what is not None:
                raise Refused(f"it reflects on the code ({what})")
        if isinstance(base, type(typing)):
            if not isinstance(node.ctx, ast.Load):
                if self.in_function:
                    raise Refused(f"it assigns {base.__name__}.{node.attr} while grading")
                return ["ModuleStore", self.resolver.describe(base), node.attr]
            if hasattr(base, node.attr):
                bound = self.resolver.attr_binding(base, node.attr)
                value = self.resolver.describe(getattr(base, node.attr))
                return ["Global", value, *([bound] if bound else [])]
        return ["Attribute", self.conv(node.value, table), node.attr, type(node.ctx).__name__]

    def _Constant(self, node: ast.Constant, table: symtable.SymbolTable) -> Json:
        return ["Constant", self.resolver.describe(node.value)]
