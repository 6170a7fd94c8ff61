"""A definition's syntax tree as the definition-level carry compares it (grader/defs_ast.py):
annotations, docstrings and the outermost defaults left out; a global name replaced by what
it denotes, told from a local, a parameter, a free or a comprehension variable by the
compiler's symbol tables; a call compared as written, ``typing.cast`` too; a store to
module state while grading refused."""

from __future__ import annotations

import ast
import builtins
import textwrap
import typing

import pytest

from harness.grader.defs_ast import MISSING, Canon, Json, Refused, scope_map

pytestmark = pytest.mark.unit


class Names:
    """A resolver over a dict of globals; an object described by its home or its repr."""

    def __init__(self, ns: dict[str, object]) -> None:
        self.ns = ns

    def lookup(self, name: str) -> object:
        return self.ns.get(name, getattr(builtins, name, MISSING))

    def describe(self, obj: object) -> Json:
        name = getattr(obj, "__qualname__", None)
        return f"{getattr(obj, '__module__', '?')}:{name}" if name else repr(obj)

    def binding(self, name: str) -> Json | None:
        return None  # the bindings have their own tests (test_defs_bindings)

    def attr_binding(self, module: object, name: str) -> Json | None:
        return None


def canon(source: str, in_function: bool = True, **ns: object) -> tuple[Json, Canon]:
    """The last statement of ``source`` (a function, or else a statement) as compared."""
    source = textwrap.dedent(source)
    tree = ast.parse(source)
    scopes = scope_map(tree, source, "<test>")
    made = Canon(scopes, Names(ns), in_function)
    node = tree.body[-1]
    if isinstance(node, ast.FunctionDef):
        return made.function(node, scopes[id(tree)]), made
    return made.statement(node, scopes[id(tree)]), made


def same(a: str, b: str, **ns: object) -> bool:
    return canon(a, **ns)[0] == canon(b, **ns)[0]


def test_annotations_are_left_out() -> None:
    typed = """
        def f(x: int, *rest: str) -> int:
            y: int = x
            z: str
            return y
    """
    plain = "def f(x, *rest):\n    y = x\n    return y\n"
    assert same(typed, plain)
    assert not same(typed, plain.replace("y = x", "y = x + 1"))
    # an annotated item or attribute without a value still evaluates all but its last step
    item = "def f(d):\n    d[g()]: int\n"
    assert not same(item, item.replace("g()", "h()"), g=1, h=2)
    assert canon("def f(d):\n    d.x: int\n")[0][3] == [["Expr", ["Name", "d", "Load"]]]


def test_a_global_is_what_it_denotes_a_local_is_its_name() -> None:
    got, _ = canon("def f():\n    return n\n", n=3)
    assert got[3] == [["Return", ["Global", "3"]]]
    assert same("def f():\n    return A\n", "def f():\n    return B\n", A=1, B=1)
    assert canon("def f():\n    return A\n", A=1)[0] != canon("def f():\n    return A\n", A=2)[0]
    for local in ("def f(n):\n    return n\n", "def f():\n    n = 1\n    return n\n"):
        assert canon(local, n=3)[0][3][-1] == ["Return", ["Name", "n", "Load"]]
    free = canon("def f():\n    n = 1\n    def g():\n        return n\n    return g\n", n=3)[0]
    assert free[3][1][3] == [["Return", ["Name", "n", "Load"]]]  # g's n is f's
    comp = canon("def f():\n    return [n for n in N]\n", n=3, N=(1,))[0]
    assert comp[3] == [
        ["Return", ["ListComp", [[["Name", "n", "Store"], ["Global", "(1,)"], [], 0]],
                    [["Name", "n", "Load"]]]]
    ]  # fmt: skip


def test_docstrings_are_left_out_and_reading_one_is_flagged() -> None:
    doc = 'def f():\n    """Says."""\n    def g():\n        """Also."""\n    return 1\n'
    assert same(doc, "def f():\n    def g():\n        'Other.'\n    return 1\n")
    assert same(doc, "def f():\n    def g():\n        '''Also.'''\n    return 1\n")
    assert canon(doc)[1].reads_doc is False
    assert canon("def f():\n    return f.__doc__\n", f=len)[1].reads_doc is True


def test_a_cast_is_compared_as_the_call_it_is() -> None:
    # its type argument runs each time (the red team sorted a list there): nothing dropped
    plain = "def f(x):\n    return x\n"
    assert not same("def f(x):\n    return cast(int, x)\n", plain, cast=typing.cast)
    assert not same("def f(x):\n    return typing.cast(int, x)\n", plain, typing=typing)
    assert same(
        "def f(x):\n    return cast(int, x)\n",
        "def f(x):\n    return typing.cast(int, x)\n",
        cast=typing.cast,
        typing=typing,
    )
    assert not same(
        "def f(x):\n    return cast(int, x)\n",
        "def f(x):\n    return cast(str, x)\n",
        cast=typing.cast,
    )


def test_the_outermost_defaults_are_left_out_a_nested_functions_kept() -> None:
    assert same("def f(x=1):\n    return x\n", "def f(x=2):\n    return x\n")
    nested = "def f():\n    def g(y=1):\n        return y\n    return g\n"
    assert not same(nested, nested.replace("y=1", "y=2"))


def test_a_store_to_module_state_is_refused_while_grading_kept_at_module_level() -> None:
    with pytest.raises(Refused, match="rebinds the module global 'N'"):
        canon("def f():\n    global N\n    N = 1\n")
    with pytest.raises(Refused, match=r"assigns typing\.x"):
        canon("def f():\n    typing.x = 1\n", typing=typing)
    assert canon("N = 1\n", in_function=False)[0][1] == [["GlobalStore", "N", "Store"]]
    stored = canon("typing.x = 1\n", in_function=False, typing=typing)[0]
    assert stored[1] == [["ModuleStore", repr(typing), "x"]]
