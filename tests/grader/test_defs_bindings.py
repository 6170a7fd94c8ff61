"""How a module-level value that compared code reads was bound (grader/defs_bindings.py):
nothing for a value written out in full or a definition; aliases followed to what they
name (a split's ``from .vendor import X`` is ``X = V.X``); the canonical statement for
anything computed, with where the module was loaded as words, not values."""

from __future__ import annotations

import importlib
import importlib.util
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest

from harness.grader.defs_graph import Graph

pytestmark = pytest.mark.unit


@pytest.fixture
def bound(tmp_path: Path) -> Iterator[Callable[[dict[str, str], str, str], object]]:
    """``bound(files, module, name)``: the binding of ``module.name`` in a suite package
    of ``files``, loaded under a fresh name; every module it loaded unloaded after."""
    before = set(sys.modules)
    made = 0

    def run(files: dict[str, str], module: str, name: str) -> object:
        nonlocal made
        made += 1
        suite_dir = tmp_path / f"s{made}" / "suite"
        suite_dir.mkdir(parents=True)
        for file, text in {"__init__.py": "", **files}.items():
            (suite_dir / file).write_text(textwrap.dedent(text))
        package = f"defs_bindings_probe_{made}"
        spec = importlib.util.spec_from_file_location(
            package, suite_dir / "__init__.py", submodule_search_locations=[str(suite_dir)]
        )
        assert spec and spec.loader
        sys.modules[package] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[package])
        loaded: ModuleType = importlib.import_module(f"{package}.{module}")
        return Graph(suite_dir, {}).bindings.of(loaded, name)

    yield run
    for name in set(sys.modules) - before:
        del sys.modules[name]


import importlib  # noqa: E402  (after the fixture, for the fixture's import_module)

WRITTEN_OUT = {
    "a constant": "X = 3",
    "signs and arithmetic": "X = -(2 * 60) + 1",
    "a display": "X = (1, 'a', [2.5, None], {'k': b'v'})",
    "a definition": "import os\nX = os.path.join",
    "a class": "X = dict",
}


@pytest.mark.parametrize("kind", sorted(WRITTEN_OUT))
def test_a_value_written_out_in_full_carries_nothing(
    kind: str, bound: Callable[..., object]
) -> None:
    assert bound({"m.py": WRITTEN_OUT[kind]}, "m", "X") is None


COMPUTED = {
    "the environment": "import os\nX = os.environ.get('HARNESS_X', '3')",
    "the interpreter's options": "X = 3 if __debug__ else 4",
    "the module's place": "X = len(__file__) > 4000",
    "a set's order": "X = list({'a', 'b'})[0] == 'q'",
    "a formatted string": "import sys\nX = '{0.argv}'.format(sys) == ''",
    "a call": "X = int('3')",
    "a name bound in a branch": "import sys\nif sys.argv:\n    X = 3\nelse:\n    X = 3",
}


@pytest.mark.parametrize("kind", sorted(COMPUTED))
def test_a_computed_value_carries_its_statement(kind: str, bound: Callable[..., object]) -> None:
    got = bound({"m.py": COMPUTED[kind]}, "m", "X")
    assert isinstance(got, list) and got[0] == "Bound" and isinstance(got[1], list)


def test_an_alias_is_followed_to_what_it_names(bound: Callable[..., object]) -> None:
    vendor = {"vendor.py": "PAGES = 3\nSLOW = int('3')\n"}
    for alias in (
        "from .vendor import PAGES as X",
        "from . import vendor as V\nX = V.PAGES",
        "from .vendor import PAGES\nX = PAGES",
        "from . import vendor as V\nX, Y = V.PAGES, 2",
    ):
        assert bound({**vendor, "m.py": alias}, "m", "X") is None, alias
    through = bound({**vendor, "m.py": "from .vendor import SLOW as X"}, "m", "X")
    direct = bound(vendor, "vendor", "SLOW")
    assert through == direct and through is not None


def test_the_module_s_place_is_words_not_a_path(bound: Callable[..., object]) -> None:
    """The same statement in two modules of two folders binds the same way; whatever it
    came to is compared by value where it is read."""
    line = "from pathlib import Path\nX = Path(__file__).resolve().parent\n"
    here = bound({"a.py": line}, "a", "X")
    there = bound({"b.py": line}, "b", "X")
    assert here == there
    assert '"Dunder", "__file__"' in str(here).replace("'", '"')


def test_a_name_from_outside_is_that_name_of_that_module(bound: Callable[..., object]) -> None:
    one = bound({"m.py": "from datetime import UTC as X, date"}, "m", "X")
    two = bound({"m.py": "from datetime import date, UTC as X, timedelta"}, "m", "X")
    assert one == two == ["Bound", ["from", 0, "datetime", "UTC"]]


def test_a_value_no_statement_binds_says_so(bound: Callable[..., object]) -> None:
    hook = (
        "def __getattr__(name):\n    if name == 'X':\n        return 3\n    raise AttributeError\n"
    )
    assert bound({"m.py": hook}, "m", "X") == ["Bound", "by no statement of its module"]


def test_a_binding_that_reads_itself_ends(bound: Callable[..., object]) -> None:
    got = bound({"m.py": "X = [1]\nX = X + [int('2')]\n"}, "m", "X")
    assert isinstance(got, list) and len(got[1]) == 2  # both statements, in order
