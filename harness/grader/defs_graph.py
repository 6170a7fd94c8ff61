"""A loaded suite as a graph of definitions: what the definition-level carry compares.

``defs_describe`` runs it in a process of its own per tree: it loads the suite as the
harness does (``scoring_bridge.load_suite_module``), then prints one JSON object:

- ``roots``: what the harness reads of the suite module (``suite``, ``context``);
- ``nodes``: every object reachable from them and from the modules' load-time effects
  that the suite defines or that may change (functions, classes, mutable values), each
  with its content; references between them are ``{"ref": id}``, so the parent compares
  two graphs by walking them together (``same_definitions``), pairing nodes one to one;
- ``effects``: what the suite's modules do at load besides defining (``defs_toplevel``);
- ``imported``: the modules outside the suite that loading it imported first;
- ``modules`` / ``unloaded``: the suite folder's Python files loaded, and not loaded.

An object is the suite's when its code (a function's ``co_filename``, a class's module
file) lies in the suite folder. Objects from elsewhere are named by their home
(``module:qualname``), constants by value, and strings or paths into the tree relative to it.
Old module names ``--moved`` are imported as their new homes (the file-level compare
proved them the same code).
"""

from __future__ import annotations

import ast
import builtins
import enum
import functools
import importlib.util
import json
import re
import sys
import types
from collections.abc import Mapping
from pathlib import Path, PurePath
from typing import Any

from harness.grader.defs_ast import MISSING, Canon, Json, Refused, outer_parts, region, scope_map
from harness.grader.defs_bindings import Bindings
from harness.grader.same_code import moved_name

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_SKIP_CLASS = {"__module__", "__dict__", "__weakref__", "__doc__", "__annotations__",
               "__dataclass_fields__", "__dataclass_params__", "__qualname__"}  # fmt: skip


class Globals:
    """The ``Resolver`` of one module's globals (``defs_ast``)."""

    def __init__(self, graph: Graph, namespace: Mapping[str, Any]) -> None:
        self.graph, self.namespace = graph, namespace

    def lookup(self, name: str) -> object:
        if name in self.namespace:
            return self.namespace[name]
        return getattr(builtins, name, MISSING)

    def describe(self, obj: object) -> Json:
        return self.graph.describe(obj)

    def binding(self, name: str) -> Json | None:
        module = sys.modules.get(str(self.namespace.get("__name__")))
        if name not in self.namespace or module is None or vars(module) is not self.namespace:
            return None
        return self.graph.bindings.of(module, name)

    def attr_binding(self, module: object, name: str) -> Json | None:
        return self.graph.bindings.of(module, name)


class Graph:
    """The nodes found so far and the ones still to fill."""

    def __init__(self, suite_dir: Path, moves: Mapping[str, str]) -> None:
        self.suite_dir = suite_dir.resolve()
        self.tree = str(self.suite_dir.parent)
        self.moves = moves
        self.nodes: dict[str, dict[str, Json]] = {}
        self.ids: dict[int, str] = {}
        self.kept: list[object] = []
        self.todo: list[tuple[str, object]] = []
        self.problems: list[str] = []
        self.parsed: dict[str, tuple[ast.Module, dict[int, Any], dict[int, Any]]] = {}
        self.suite_module_names: dict[str, str] = {}
        self._external: dict[int, str] | None = None
        self.bindings = Bindings(self)

    # -- whose ---------------------------------------------------------------------------

    def in_suite(self, file: str | None) -> bool:
        if not file or file.startswith("<"):
            return False
        return Path(file).resolve().is_relative_to(self.suite_dir)

    def suite_module(self, obj: object) -> bool:
        return isinstance(obj, types.ModuleType) and self.in_suite(getattr(obj, "__file__", None))

    def suite_class(self, obj: object) -> bool:
        if not isinstance(obj, type):
            return False
        return self.suite_module(sys.modules.get(obj.__module__))

    def suite_function(self, obj: object) -> bool:
        return isinstance(obj, types.FunctionType) and self.in_suite(obj.__code__.co_filename)

    def suite_defined(self, obj: object) -> bool:
        """A function, class or instance of a class the suite defines."""
        return (
            self.suite_function(obj)
            or self.suite_class(obj)
            or (not isinstance(obj, type) and self.suite_class(type(obj)))
        )

    # -- describing ----------------------------------------------------------------------

    def describe(self, obj: object) -> Json:
        if obj is None or obj is Ellipsis or isinstance(obj, bool):
            return {"const": repr(obj)}
        if type(obj) in (int, float, complex):
            return {type(obj).__name__: repr(obj)}
        if type(obj) is str:
            return {"str": self._text(obj)}
        if type(obj) is bytes:
            return {"bytes": obj.hex()}
        if type(obj) is tuple:
            return {"tuple": [self.describe(x) for x in obj]}
        if type(obj) is frozenset:
            return {"frozenset": sorted((self.describe(x) for x in obj), key=json.dumps)}
        if isinstance(obj, PurePath):
            return {"path": type(obj).__name__, "at": self._text(str(obj))}
        if isinstance(obj, types.ModuleType):
            if self.suite_module(obj):
                return {"module": self._node(obj, "module")}
            return {"extmodule": self._moved(obj.__name__)}
        if isinstance(obj, enum.Enum):
            return {"enum": self.describe(type(obj)), "name": obj.name}
        if self.suite_function(obj):
            return {"ref": self._node(obj, "function")}
        if self.suite_class(obj):
            return {"ref": self._node(obj, "class")}
        if isinstance(obj, types.MethodType):
            return {"method": self.describe(obj.__func__), "self": self.describe(obj.__self__)}
        if isinstance(obj, staticmethod | classmethod):
            return {type(obj).__name__: self.describe(obj.__func__)}
        if isinstance(obj, property):
            return {"property": [self.describe(f) for f in (obj.fget, obj.fset, obj.fdel)]}
        if isinstance(obj, functools.cached_property):
            return {"cached_property": self.describe(obj.func), "attr": obj.attrname}
        if isinstance(obj, functools.partial):
            return {"partial": self.describe(obj.func), "args": self.describe(obj.args),
                    "keywords": self.describe(dict(obj.keywords))}  # fmt: skip
        if isinstance(obj, types.FunctionType | type | types.BuiltinFunctionType):
            return self._external_callable(obj)
        if isinstance(obj, re.Pattern):
            return {"pattern": self.describe(obj.pattern), "flags": obj.flags}
        home = self.external_home(obj)
        if home is not None and not self.suite_defined(obj):
            return {"extobj": home}
        return {"ref": self._node(obj, "object")}

    def _external_callable(self, obj: Any) -> Json:
        name = f"{self._moved(getattr(obj, '__module__', None) or '?')}:{obj.__qualname__}"
        cells = getattr(obj, "__closure__", None) or ()
        wrapped = getattr(obj, "__wrapped__", None)
        if "<locals>" in obj.__qualname__ or wrapped is not None:
            # a closure made by code outside the suite (a decorator's wrapper): what it
            # closes over may be the suite's
            return {"ref": self._node(obj, "external-closure")}
        return {"ext": name, "cells": len(cells)}

    def _text(self, text: str) -> str:
        text = text.replace(self.tree, "<tree>")
        if text in self.suite_module_names:
            return "<suite module " + self.suite_module_names[text] + ">"
        return moved_name(text, self.moves)

    def _moved(self, module: str) -> str:
        return moved_name(module, self.moves)

    def external_home(self, obj: object) -> str | None:
        """Where an object outside the suite lives (a module attribute), if anywhere."""
        if self._external is None:
            self._external = {}
            for mod_name, mod in sorted(sys.modules.items()):
                if mod is None or self.suite_module(mod):
                    continue
                for attr, value in list(vars(mod).items()):
                    self._external.setdefault(id(value), f"{self._moved(mod_name)}:{attr}")
        return self._external.get(id(obj))

    def _node(self, obj: object, kind: str) -> str:
        key = id(obj)
        if key not in self.ids:
            nid = str(len(self.ids))
            self.ids[key] = nid
            self.kept.append(obj)
            self.nodes[nid] = {"kind": kind, "name": _display(obj)}
            self.todo.append((nid, obj))
        return self.ids[key]

    # -- filling nodes -------------------------------------------------------------------

    def fill(self) -> None:
        while self.todo:
            nid, obj = self.todo.pop()
            node = self.nodes[nid]
            try:
                node.update(self._content(node["kind"], obj))
            except (Refused, RecursionError) as exc:
                self.problems.append(f"{node['name']}: {exc}")
                node["refused"] = str(exc)

    def _content(self, kind: str, obj: Any) -> dict[str, Json]:
        if kind == "function":
            return self._function(obj)
        if kind == "class":
            return self._class(obj)
        if kind == "external-closure":
            cells = [c.cell_contents if _full(c) else MISSING for c in obj.__closure__ or ()]
            code = obj.__code__  # its own code's home (``functools.wraps`` renames it)
            return {"ext": f"{self._text(code.co_filename)}:{code.co_qualname}",
                    "cells": [None if c is MISSING else self.describe(c) for c in cells],
                    "attrs": self._mapping(vars(obj))}  # fmt: skip
        if kind == "module":  # read as a value: what it defines, by name
            return {
                "defines": self._mapping(
                    {
                        k: v
                        for k, v in sorted(vars(obj).items())
                        if not k.startswith("__") and (self.suite_defined(v) or _constant(v))
                    }
                )
            }
        return self._object(obj)

    def _object(self, obj: Any) -> dict[str, Json]:
        kind: dict[str, Json] = {"type": self.describe(type(obj))}
        if isinstance(obj, dict):
            kind["items"] = [[self.describe(k), self.describe(v)] for k, v in obj.items()]
            if hasattr(obj, "default_factory"):
                kind["default_factory"] = self.describe(obj.default_factory)
        elif isinstance(obj, list | bytearray) or type(obj).__name__ == "deque":
            kind["items"] = [self.describe(x) for x in obj]
        elif isinstance(obj, set | frozenset):
            kind["items"] = sorted((self.describe(x) for x in obj), key=json.dumps)
        if hasattr(obj, "__dict__") and not isinstance(obj, type):
            kind["state"] = self._mapping(self._state(obj))
        slots = [s for c in type(obj).__mro__ for s in getattr(c, "__slots__", ())]
        if slots:
            kind["slots"] = [[s, self.describe(getattr(obj, s, None))] for s in slots]
        if not ({"items", "state", "slots"} & set(kind)):
            kind["repr"] = _ADDRESS.sub("", repr(obj))
        return kind

    def _state(self, obj: object) -> dict[str, Any]:
        """An instance's attributes; of the harness's ``Suite``, its ``sources`` but the
        suite folder's Python files: they name what the fingerprint hashes (read by
        ``Suite.source_files`` alone), and the suite's Python is what this compare proves."""
        from harness.scoring.suite import Suite

        state = dict(vars(obj))
        if type(obj) is Suite:
            state["sources"] = tuple(
                p for p in obj.sources
                if not (p.suffix == ".py" and p.resolve().is_relative_to(self.suite_dir))
            )  # fmt: skip
        return state

    def _mapping(self, mapping: Mapping[str, Any]) -> Json:
        return [[k, self.describe(v)] for k, v in mapping.items()]

    def _function(self, fn: types.FunctionType) -> dict[str, Json]:
        code = fn.__code__
        _, scopes, enclosing = self._parsed(code.co_filename)
        node = _find(enclosing, code)
        outer = enclosing[id(node)][1]
        canon = Canon(scopes, Globals(self, fn.__globals__), in_function=True)
        body = canon.function(node, outer)
        if canon.reads_doc:
            raise Refused("it reads a __doc__ (docstrings are left out of the compare)")
        if getattr(fn, "__builtins__", None) is not vars(builtins):  # how len, min resolve
            raise Refused("its builtins are not Python's (__builtins__ rebound where defined)")
        cells = dict(zip(code.co_freevars, fn.__closure__ or (), strict=True))
        return {
            "qualname": fn.__qualname__,
            "ast": body,
            "defaults": self.describe(fn.__defaults__),
            "kwdefaults": self._mapping(fn.__kwdefaults__ or {}),
            "closure": [
                [k, self.describe(c.cell_contents) if _full(c) else None] for k, c in cells.items()
            ],
            "attrs": self._mapping(vars(fn)),
        }

    def _class(self, cls: type) -> dict[str, Json]:
        module = sys.modules[cls.__module__]
        tree, scopes, enclosing = self._parsed(str(module.__file__))
        node = next(
            (n for n, _ in enclosing.values() if isinstance(n, ast.ClassDef)
             and n.name == cls.__name__ and _qualname(tree, n) == cls.__qualname__),
            None,
        )  # fmt: skip
        if node is None:
            raise Refused("its class statement is not in its module's file")
        outer = enclosing[id(node)][1]
        canon = Canon(scopes, Globals(self, vars(module)), in_function=False)
        dataclass = "__dataclass_fields__" in vars(cls)
        attrs = [
            [k, {"generated": k} if dataclass and _generated(v) else self.describe(v)]
            for k, v in vars(cls).items()
            if k not in _SKIP_CLASS
        ]
        fields = [
            [f.name, str(f._field_type), self.describe(f.default),
             self.describe(f.default_factory), f.init, f.repr, f.compare,
             self.describe(f.hash), self.describe(f.kw_only), self.describe(dict(f.metadata))]
            for f in getattr(cls, "__dataclass_fields__", {}).values()
        ]  # fmt: skip
        params = getattr(cls, "__dataclass_params__", None)
        return {
            "qualname": cls.__qualname__,
            "statement": canon.class_body(node, outer),
            "bases": [self.describe(b) for b in cls.__bases__],
            "meta": self.describe(type(cls)),
            "attrs": attrs,
            "annotations": list(vars(cls).get("__annotations__", {})),
            "fields": fields,
            "params": _ADDRESS.sub("", repr(params)) if params is not None else None,
        }

    def parsed_file(self, file: str) -> tuple[ast.Module, dict[int, Any]]:
        tree, scopes, _ = self._parsed(file)
        return tree, scopes

    def _parsed(self, file: str) -> tuple[ast.Module, dict[int, Any], dict[int, Any]]:
        """A file's tree, its scopes' symbol tables and each scope node's enclosing table."""
        if file not in self.parsed:
            # decoded as the import system decodes it: its coding line honoured (a reader
            # that ignored one would compare a comment where Python runs a statement)
            source = importlib.util.decode_source(Path(file).read_bytes())
            tree = ast.parse(source, file)
            scopes = scope_map(tree, source, file)
            self.parsed[file] = (tree, scopes, _enclosing(tree, scopes))
        return self.parsed[file]


def _constant(value: object) -> bool:
    return value is None or type(value) in (bool, int, float, str, bytes, tuple, frozenset)


def _full(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018 (an empty cell raises)
    except ValueError:
        return False
    return True


def _generated(value: object) -> bool:
    """A method ``dataclass`` wrote (its behaviour follows from the fields compared)."""
    code = getattr(value, "__code__", None)
    return code is not None and code.co_filename == "<string>"


def _display(obj: object) -> str:
    name = getattr(obj, "__qualname__", None) or type(obj).__name__
    code = getattr(obj, "__code__", None)
    where = f" ({Path(code.co_filename).name}:{code.co_firstlineno})" if code else ""
    return f"{name}{where}"


def _first_line(node: ast.AST) -> int:
    decorators: list[ast.expr] = getattr(node, "decorator_list", [])
    line: int = getattr(node, "lineno", 0)
    return min([line, *[d.lineno for d in decorators]])


def _find(enclosing: dict[int, Any], code: types.CodeType) -> ast.AST:
    """The node of a function's code, by its name and first line."""
    kinds = (ast.Lambda,) if code.co_name == "<lambda>" else (ast.FunctionDef, ast.AsyncFunctionDef)
    found = [
        n
        for n, _ in enclosing.values()
        if isinstance(n, kinds)
        and getattr(n, "name", "<lambda>") == code.co_name
        and _first_line(n) == code.co_firstlineno
    ]
    if len(found) != 1:
        raise Refused(f"{len(found)} definitions of {code.co_name} at line {code.co_firstlineno}")
    return found[0]


def _enclosing(tree: ast.Module, scopes: dict[int, Any]) -> dict[int, Any]:
    """Each scope node (by ``id``): the node and the symbol table of the scope it sits in."""
    out: dict[int, Any] = {}

    def place(node: ast.AST, table: Any) -> None:
        if id(node) in scopes and node is not tree:
            out[id(node)] = (node, table)
            for part in outer_parts(node):
                place(part, table)
            for part in region(node):
                place(part, scopes[id(node)])
            return
        for child in ast.iter_child_nodes(node):
            place(child, table)

    for stmt in tree.body:
        place(stmt, scopes[id(tree)])
    return out


def _qualname(tree: ast.Module, target: ast.ClassDef) -> str:
    def walk(node: ast.AST, prefix: str) -> str | None:
        for child in ast.iter_child_nodes(node):
            if child is target:
                return prefix + target.name
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                got = walk(child, f"{prefix}{child.name}.<locals>.")
            elif isinstance(child, ast.ClassDef):
                got = walk(child, f"{prefix}{child.name}.")
            else:
                got = walk(child, prefix)
            if got is not None:
                return got
        return None

    return walk(tree, "") or target.name
