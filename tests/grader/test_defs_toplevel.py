"""What a suite module does at load besides defining (grader/defs_toplevel.py): each kind of
harmless top-level statement (docstring, import, pure assignment, assert, ``if``,
undecorated definition, a package's path plumbing, a loader helper's call) is left out; a
call of anything impure, a mutation, an attribute stored on an imported module, a loop or a
decorated definition is an effect, described."""

from __future__ import annotations

import importlib.util
import json
import sys
import textwrap
import types
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from harness.grader.defs_graph import Graph
from harness.grader.defs_toplevel import Module

pytestmark = pytest.mark.unit

PRELUDE = """\
'''The probe.'''
from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import defs_toplevel_ext as ext

HERE = Path(__file__).resolve().parent
"""

Effects = Callable[[str], list[object]]


@pytest.fixture
def effects(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Effects]:
    """The effects of a suite module of ``PRELUDE`` and a body, loaded under a name of its
    own (an outside module ``defs_toplevel_ext`` importable); every module it loaded
    unloaded after."""
    monkeypatch.setitem(sys.modules, "defs_toplevel_ext", types.ModuleType("defs_toplevel_ext"))
    before = set(sys.modules)
    suite_dir = tmp_path / "suite"
    suite_dir.mkdir()
    (suite_dir / "vendor.py").write_text("PAGES = 3\n")

    def run(body: str) -> list[object]:
        path = suite_dir / f"mod{len(list(suite_dir.glob('mod*.py')))}.py"
        path.write_text(PRELUDE + "\n" + textwrap.dedent(body))
        spec = importlib.util.spec_from_file_location(f"probe_{abs(hash(str(path)))}", path)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        return Module(Graph(suite_dir, {}), module).effects()

    yield run
    for name in set(sys.modules) - before:
        del sys.modules[name]


HARMLESS = {
    "a constant": "X = 1\nA, *B = 2, 3, 4",
    "a pure call": "P = HERE / 'b'.upper()\nS = sorted({'b', 'a'})",
    "a pure comprehension": (
        "L = [x * 2 for x in range(3) if x]\nM = tuple(sorted(p.name for p in HERE.glob('*.py')))"
    ),
    "an annotated assignment": "T: int = len('ab')\nU: str",
    "an assert": "assert 1 + 1 == 2, 'arithmetic'",
    "an assert on the process (it holds, or the load fails)": "assert __name__ in sys.modules",
    "if TYPE_CHECKING": "if TYPE_CHECKING:\n    import os\n    os.remove('x')",
    "an if of inert branches": "if len('ab') == 2:\n    Y = 2\nelse:\n    Y = 3",
    "the suite's own folder asked": "F = sorted(HERE.glob('*.py'))\nE = HERE.exists()",
    "a function": "def f(x=(1, 2)):\n    print(x)",
    "a class": "class C:\n    n = 1\n\n    @property\n    def p(self):\n        return 1",
    "package plumbing": (
        "__path__ = [str(HERE)]\n__package__ = __name__\n"
        "__spec__.submodule_search_locations = __path__\n__all__ = ['X']"
    ),
}


@pytest.mark.parametrize("kind", sorted(HARMLESS))
def test_a_harmless_statement_is_left_out(kind: str, effects: Effects) -> None:
    assert effects(HARMLESS[kind]) == []


EFFECTS = {
    "a call of an impure function": "print('loaded')",
    "a mutation": "LOG = []\nLOG.append(1)",
    "a store on an imported module": "ext.value = 2",
    "a store on a module in a tuple": "_, ext.value = 0, 2",
    "a call in a comprehension": "L = [0 for _ in range(2) if print('side')]",
    "a loop": "for i in range(2):\n    pass",
    "a suite function called": "def g():\n    return 1\n\n\nX = g()",
    "a decorated function": "@functools.lru_cache\ndef h():\n    return 1",
    # what picks a binding, or a class attribute, from the process: compared as written
    # (a module-level value is compared with how it was bound where it is read)
    "the interpreter picks a branch": "if sys.version_info >= (3,):\n    Y = 2",
    "a class attribute from the environment": (
        "import os\n\n\nclass K:\n    n = os.environ.get('HARNESS_B')"
    ),
    "a class attribute from the module's place": "class K:\n    where = __file__",
    "a default from the command line": "def f(n=len(sys.argv)):\n    return n",
    "a default from a path outside the suite": "def f(b=Path('/verify').exists()):\n    return b",
    "a default from an outside module's value": "def f(n=ext.__name__):\n    return n",
    "a default from the interpreter's options": "def f(d=__debug__):\n    return d",
    "a salted hash": "H = hash('a') % 7",
    "a module's attribute hook": "def __getattr__(name):\n    return 3",
    "a class whose metaclass runs code": "import enum\n\n\nclass E(enum.Enum):\n    A = 1",
    "a class attribute annotation that runs code": "class K:\n    v: 'print() or int' = 0",
}


@pytest.mark.parametrize("kind", sorted(EFFECTS))
def test_a_side_effecting_statement_is_an_effect(kind: str, effects: Effects) -> None:
    (got,) = effects(EFFECTS[kind])
    assert isinstance(got, list)
    words = ("decorated", "class", "default", "hook")
    definition = any(w in kind for w in words)
    assert got[0] == ("def" if definition else "stmt")


def test_a_store_on_a_module_names_the_module_and_the_attribute(effects: Effects) -> None:
    (got,) = effects("ext.value = 2")
    assert '["ModuleStore", {"extmodule": "defs_toplevel_ext"}, "value"]' in json.dumps(got)
    (other,) = effects("ext.other = 2")
    assert other != got


LOADER = """
def _load(name):
    full = f"defs_toplevel_vendor_{abs(hash(str(HERE)))}"
    spec = importlib.util.spec_from_file_location(full, HERE / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[full] = module
    spec.loader.exec_module(module)
    return module


V = _load("vendor")
"""


def test_a_loader_helper_is_plumbing_unless_it_does_more(effects: Effects) -> None:
    assert effects(LOADER) == []
    louder = LOADER.replace("    return module", "    print(name)\n    return module")
    (got,) = effects(louder)
    assert isinstance(got, list) and got[0] == "stmt"
    assert '["Call", ["Global", {"ref": "0"}], [["Constant", {"str": "vendor"}]]' in json.dumps(got)
