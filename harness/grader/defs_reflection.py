"""Code the definition compare cannot vouch for: code that looks at itself.

The compare leaves out what a restructure may change (annotations, docstrings, line
numbers, which module a definition sits in, its name's spelling in a module's namespace,
the files' layout) because running the code cannot tell. Code that *reflects* can: it
reads those through metadata attributes (``__module__``, ``__code__``,
``__annotations__``...), through the interpreter's reflection (``inspect``,
``typing.get_type_hints``, ``sys._getframe``, ``globals()``, ``vars()``, ``eval``,
pickling), or through a global looked up by a name it computes. A definition that does
any of that is refused, named, whatever it does with it; so is one that asks whether two
constants are the same object (the compiler merges equal constants of one module, not of
two).
"""

from __future__ import annotations

import ast
import builtins
import sys
import typing
from types import ModuleType
from typing import Any

#: Dunders a definition may use: the protocols objects behave by (never what a restructure
#: moves). Every other ``__x__`` read is reflection.
PROTOCOL = frozenset(
    {
        *("__init__", "__new__", "__call__", "__enter__", "__exit__", "__aenter__"),
        *("__aexit__", "__iter__", "__next__", "__aiter__", "__anext__", "__len__"),
        *("__getitem__", "__setitem__", "__delitem__", "__contains__", "__missing__"),
        *("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__", "__bool__"),
        *("__str__", "__repr__", "__format__", "__add__", "__sub__", "__mul__"),
        *("__truediv__", "__floordiv__", "__mod__", "__neg__", "__abs__", "__round__"),
        *("__index__", "__int__", "__float__", "__post_init__", "__class__", "__await__"),
        *("__get__", "__set__", "__reversed__"),
    }
)
#: Reflection with or without an argument; ``vars`` and ``dir`` of an object (its
#: attributes) are data, of a module (its namespace) or of nothing (the caller's) are not.
ALWAYS = ("globals", "locals", "eval", "exec", "compile", "__import__", "breakpoint")

#: Calls that list a folder or read a file's metadata (its times, its inode): of the
#: scenario's, what a restructure or a checkout changes, not the files' bytes.
LISTING = frozenset(
    {"iterdir", "glob", "rglob", "walk", "scandir", "listdir", "fwalk", "stat", "lstat"}
    | {"getmtime", "getctime", "getatime", "samefile", "owner", "group"}
)

_REFLECTING_MODULES = frozenset({"inspect", "pickle", "_pickle", "marshal", "copyreg", "dis"})


def _reflecting() -> dict[int, str]:
    found: dict[int, str] = {id(getattr(builtins, n)): n for n in ALWAYS}
    for name in ("_getframe", "_current_frames", "modules", "settrace", "setprofile"):
        if hasattr(sys, name):
            found[id(getattr(sys, name))] = f"sys.{name}"
    found[id(typing.get_type_hints)] = "typing.get_type_hints"
    return found


_BY_ID = _reflecting()


def reflection(obj: object) -> str | None:
    """What a global or module attribute is, if it is the interpreter's reflection."""
    if id(obj) in _BY_ID:
        return _BY_ID[id(obj)]
    home = getattr(obj, "__module__", None)
    if isinstance(obj, ModuleType):
        home = obj.__name__
    if isinstance(home, str) and home.split(".")[0] in _REFLECTING_MODULES:
        return f"{home}.{getattr(obj, '__qualname__', '')}".rstrip(".")
    return None


def metadata(attr: str) -> bool:
    """A ``__x__`` attribute that is not a protocol's: metadata a restructure may change."""
    return attr.startswith("__") and attr.endswith("__") and attr not in PROTOCOL


_CONSTANTS = frozenset({"str", "int", "float", "complex", "bytes", "tuple", "frozenset"})


def constant_identity(operands: list[Any]) -> bool:
    """An ``is`` between operands one of which is a constant whose identity the compiler
    decides (not ``None``, a bool or ``...``)."""
    for op in operands:
        if isinstance(op, list) and op and op[0] in ("Global", "Constant") and len(op) > 1:
            described = op[1]
            if isinstance(described, dict) and _CONSTANTS & described.keys():
                return True
    return False


def annotation_runs_code(node: ast.expr | None) -> bool:
    """An annotation that does more than name types when something evaluates it (the
    interpreter without ``from __future__ import annotations``; ``typing.get_type_hints``,
    ``functools.singledispatch``, pydantic...): a call, an operator but ``|``, a lambda, a
    string that says as much. Names, dotted names, subscripts, lists, ``|`` and constants
    only name types: a restructure may add or change them freely."""
    if node is None or isinstance(node, ast.Name):
        return False
    if isinstance(node, ast.Constant):
        if not isinstance(node.value, str):
            return False
        try:
            parsed = ast.parse(node.value, mode="eval").body
        except SyntaxError:
            return True
        return annotation_runs_code(parsed)
    if isinstance(node, ast.Attribute):
        return annotation_runs_code(node.value)
    if isinstance(node, ast.Subscript):
        return annotation_runs_code(node.value) or annotation_runs_code(node.slice)
    if isinstance(node, ast.Tuple | ast.List):
        return any(annotation_runs_code(e) for e in node.elts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return annotation_runs_code(node.left) or annotation_runs_code(node.right)
    return True


def annotations_of(args: ast.arguments, returns: ast.expr | None) -> list[ast.expr]:
    """A function's parameter and return annotations."""
    params = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    found = [a.annotation for a in params if a is not None and a.annotation is not None]
    return [*found, *([returns] if returns is not None else [])]
