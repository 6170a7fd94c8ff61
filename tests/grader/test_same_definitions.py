"""The definition-level compare of a suite (grader/same_definitions.py): a one-file suite
split into a package (its loader helper a relative import, annotations added, imports
reordered) is proved the same; each edit of the class "changes what grades, survives a
naive comparison" is refused, with a line naming what differs."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import tarfile
import time
from pathlib import Path
from typing import Any

import pytest

from harness.grader.same_definitions import (
    compare_graphs,
    describe,
    files_differ,
    same_definitions,
    unloaded_differ,
)
from tests.conftest import REPO_ROOT

VENDOR = '''\
"""The mock."""
import dataclasses
import json
import typing

PAGES = 3
SEEN = []
EMPTY = []


def page(n, size=10):
    SEEN.append(n)
    return json.dumps({"n": n, "size": size, "shape": dataclasses.astuple(Shape(n))})


@dataclasses.dataclass
class Shape:
    n: object
    wide: object = False
    LIMIT: typing.ClassVar[object] = 5
'''

ONE_FILE = '''\
"""A suite of one file and a loader helper."""
import contextlib
import importlib.util
import sys
from pathlib import Path

from harness.scoring import Suite, graded

HERE = Path(__file__).resolve().parent


def _load_vendor():
    name = f"fake_vendor_{abs(hash(str(HERE)))}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, HERE / "vendor.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


V = _load_vendor()
LIMIT = V.PAGES + 1
suite = Suite(name="fake", version="1.0.0", tier_weights={"core": 1.0},
              thresholds=HERE / "thresholds.yml")


class Evidence:
    def __init__(self, pages):
        self.pages = pages

    def count(self):
        return len(self.pages)


@contextlib.contextmanager
def context(tree, seed, evidence_dir):
    yield Evidence([V.page(n) for n in range(V.PAGES)])


def _ratio(ev, extra=0):
    total = ev.count() + extra
    return total / LIMIT


@suite.check("pages", tier="core", harm="pages lost")
def pages(ev):
    return graded(_ratio(ev) if V.EMPTY == [] else 0.0)


@suite.check("seen", tier="core", harm="pages unseen")
def seen(ev):
    return graded(1.0 if len(V.SEEN) >= V.PAGES else 0.5)
'''

PACKAGE_SUITE = '''\
"""A suite as a package: the harness imports this file alone."""

from __future__ import annotations

import sys
from pathlib import Path

__path__ = [str(Path(__file__).resolve().parent)]
__package__ = __name__
if __spec__ is not None:
    __spec__.submodule_search_locations = __path__
assert __name__ in sys.modules, "import the suite as the harness does"

from .checks import suite  # noqa: E402
from .run import context  # noqa: E402

__all__ = ["context", "suite"]
'''

PACKAGE_RUN = '''\
"""The run."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from . import vendor
from .evidence import Evidence


@contextlib.contextmanager
def context(tree: Path, seed: str, evidence_dir: Path) -> Iterator[Evidence]:
    yield Evidence([vendor.page(n) for n in range(vendor.PAGES)])
'''

PACKAGE_EVIDENCE = '''\
"""What the run saw."""

from __future__ import annotations


class Evidence:
    """The pages read."""

    def __init__(self, pages: list[str]) -> None:
        self.pages = pages

    def count(self) -> int:
        """How many."""
        return len(self.pages)
'''

PACKAGE_CHECKS = '''\
"""The checks."""

from __future__ import annotations

from pathlib import Path

from harness.scoring import Outcome, Suite, graded

from .evidence import Evidence
from .vendor import EMPTY, PAGES, SEEN

HERE = Path(__file__).resolve().parent
LIMIT: int = PAGES + 1
suite = Suite(name="fake", version="1.0.0", tier_weights={"core": 1.0},
              thresholds=HERE / "thresholds.yml")


def _ratio(ev: Evidence, extra: int = 0) -> float:
    total: int = ev.count() + extra
    return total / LIMIT


@suite.check("pages", tier="core", harm="pages lost")
def pages(ev: Evidence) -> Outcome:
    return graded(_ratio(ev) if EMPTY == [] else 0.0)


@suite.check("seen", tier="core", harm="pages unseen")
def seen(ev: Evidence) -> Outcome:
    return graded(1.0 if len(SEEN) >= PAGES else 0.5)
'''

VENDOR_TYPED = '''\
"""The mock."""
import dataclasses
import json
from typing import ClassVar

PAGES = 3
SEEN: list[int] = []
EMPTY: list[int] = []


def page(n: int, size: int = 10) -> str:
    SEEN.append(n)
    return json.dumps({"n": n, "size": size, "shape": dataclasses.astuple(Shape(n))})


@dataclasses.dataclass
class Shape:
    """A page's shape."""

    n: int
    wide: bool = False
    LIMIT: ClassVar[int] = 5
'''

PACKAGE = {
    "suite.py": PACKAGE_SUITE,
    "run.py": PACKAGE_RUN,
    "evidence.py": PACKAGE_EVIDENCE,
    "checks.py": PACKAGE_CHECKS,
    "vendor.py": VENDOR_TYPED,
    "__init__.py": '"""The suite as a package, for linters."""\n',
}


def _tree(root: Path, files: dict[str, str]) -> Path:
    suite_dir = root / "scenario" / "suite"
    suite_dir.mkdir(parents=True)
    (suite_dir / "thresholds.yml").write_text("calibrated: false\nhigh: 0.9\nlow: 0.1\n")
    (suite_dir / "data.txt").write_text("fixture\n")
    for name, text in files.items():
        (suite_dir / name).write_text(text)
    return suite_dir


@pytest.fixture(scope="module")
def described(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """The one-file suite, and its graph (described once for every mutation)."""
    suite_dir = _tree(tmp_path_factory.mktemp("old"), {"suite.py": ONE_FILE, "vendor.py": VENDOR})
    (graph,) = describe(REPO_ROOT, [(suite_dir, {})])
    return suite_dir, graph


@pytest.fixture
def old(described: tuple[Path, dict[str, Any]]) -> Path:
    return described[0]


def _differs(
    described: tuple[Path, dict[str, Any]], tmp_path: Path, edits: dict[str, tuple[str, str]]
) -> list[str]:
    """What the compare says of the package with ``edits`` (file: (before, after))."""
    files = dict(PACKAGE)
    for name, (before, after) in edits.items():
        assert before in files[name], (name, before)
        files[name] = files[name].replace(before, after, 1)
    old, graph = described
    new = _tree(tmp_path / "new", files)
    problems = files_differ(old, new)
    if problems:
        return problems
    (now,) = describe(REPO_ROOT, [(new, {})])
    return compare_graphs(graph, now) + unloaded_differ(old, new, graph, now)


@pytest.mark.unit
def test_a_split_into_a_package_is_the_same_definitions(
    described: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    assert _differs(described, tmp_path, {}) == []


MUTATIONS = {
    "a changed constant": ("vendor.py", "PAGES = 3", "PAGES = 4"),
    "a swapped operator": ("checks.py", "len(SEEN) >= PAGES", "len(SEEN) > PAGES"),
    "checks reordered": (
        "checks.py",
        '@suite.check("pages"',
        '@suite.check("zzz", tier="core", harm="x")\ndef z(ev: Evidence) -> Outcome:\n'
        '    return graded(1.0)\n\n\n@suite.check("pages"',
    ),
    "a check's tolerance": (
        "checks.py",
        'harm="pages unseen"',
        'harm="pages unseen", tolerance=0.1, tolerance_why="w"',
    ),
    "the suite's critical floor": (
        "checks.py",
        'tier_weights={"core": 1.0},',
        'tier_weights={"core": 1.0}, critical_floor=0.5,',
    ),
    "a check's harm": ("checks.py", 'harm="pages lost"', 'harm="pages gone"'),
    "a default argument": ("checks.py", "extra: int = 0", "extra: int = 1"),
    "a decorator added": (
        "checks.py",
        "def _ratio(",
        "@__import__('functools').lru_cache\ndef _ratio(",
    ),
    "a global rebound at module level": (
        "checks.py",
        "LIMIT: int = PAGES + 1\n",
        "LIMIT: int = PAGES + 1\nLIMIT = 9\n",
    ),
    "a side effect at import": (
        "evidence.py",
        "class Evidence:",
        "import harness.appkit.fetch as _f\n_f.get = print\n\n\nclass Evidence:",
    ),
    "a stdlib name shadowed": (
        "checks.py",
        "def _ratio(",
        "def len(x: object) -> int:\n    return 3\n\n\ndef _ratio(",
    ),
    "two equal globals swapped, one mutated": ("checks.py", "if EMPTY == []", "if SEEN == []"),
    "a cast whose type argument runs (red team H1)": (
        "checks.py",
        "    return total / LIMIT",
        "    return __import__('typing').cast(ev.pages.sort(reverse=True) or float, total / LIMIT)",
    ),
    "__builtins__ rebound at module level (red team H2)": (
        "checks.py",
        "HERE = Path",
        "__builtins__ = {**__import__('builtins').__dict__, 'len': lambda x: 3}\nHERE = Path",
    ),
    "__builtins__ bound by an import (red team H3)": (
        "checks.py",
        "HERE = Path",
        "from . import vendor as __builtins__  # noqa: F401\nHERE = Path",
    ),
    "a harness monkeypatch in a function run at load": (
        "run.py",
        "@contextlib.contextmanager",
        "def _patch() -> None:\n    import decimal\n    decimal.getcontext().prec = 5\n\n\n"
        "_patch()\n\n\n"
        "@contextlib.contextmanager",
    ),
    "a module imported for its effect only": (
        "suite.py",
        "from .run import context",
        "from .run import context\nimport antigravity",
    ),
    "a global written while grading": (
        "checks.py",
        "    return graded(1.0 if len(SEEN)",
        "    global LIMIT\n    LIMIT = 1\n    return graded(1.0 if len(SEEN)",
    ),
    "a method's body": ("evidence.py", "return len(self.pages)", "return len(self.pages) - 1"),
    "a keyword argument's name": ("vendor.py", '"size": size', '"sizes": size'),
    "a local made global by a removed assignment": (
        "checks.py",
        "    total: int = ev.count() + extra\n    return total / LIMIT",
        "    return ev.count() / LIMIT",
    ),
    "a dataclass's fields reordered": (
        "vendor.py",
        "    n: int\n    wide: bool = False\n",
        "    wide: bool = False\n    n: int = 0\n",
    ),
    "a ClassVar made a field": ("vendor.py", "LIMIT: ClassVar[int] = 5", "LIMIT: int = 5"),
    "a field's default": ("vendor.py", "wide: bool = False", "wide: bool = True"),
    "the thresholds path": ("checks.py", 'HERE / "thresholds.yml"', 'HERE / "other.yml"'),
    # a value equal in the checker's process, another in a scoring's (red team H4's class)
    "a constant read from the environment (red team H4)": (
        "vendor.py",
        "PAGES = 3",
        "import os\n\nPAGES = int(os.environ.get('HARNESS_PAGES', '3'))",
    ),
    "a constant from a name imported from outside": (
        "vendor.py",
        "PAGES = 3",
        "from os import environ\n\nPAGES = int(environ.get('HARNESS_PAGES', '3'))",
    ),
    "a constant from the command line": (
        "vendor.py",
        "PAGES = 3",
        "import sys\n\nPAGES = 3 + len(sys.argv[99:])",
    ),
    "a constant from the interpreter": (
        "vendor.py",
        "PAGES = 3",
        "import sys\n\nPAGES = 3 if sys.version_info >= (3, 8) else 4",
    ),
    "a constant from a path outside the suite": (
        "vendor.py",
        "PAGES = 3",
        "from pathlib import Path as _P\n\nPAGES = 4 if _P('/verify').exists() else 3",
    ),
    "a constant from a salted hash": ("vendor.py", "PAGES = 3", "PAGES = 3 + hash('p') % 1"),
    # red team round 3: values the prover's process computes one way and a scoring's may
    # compute another, each equal here (every read carries how its value was bound)
    "the interpreter's -O": ("vendor.py", "PAGES = 3", "PAGES = 3 if __debug__ else 4"),
    "the module's place": (
        "vendor.py",
        "PAGES = 3",
        "PAGES = 3 + (not __file__.startswith(('/tmp', '/work')))",
    ),
    "how the module was cached": (
        "vendor.py",
        "PAGES = 3",
        "PAGES = 3 + ('__pycache__' in str(__cached__))",
    ),
    "a path derived from the module's place": (
        "checks.py",
        "LIMIT: int = PAGES + 1",
        "LIMIT: int = PAGES + 1 + (len(str(HERE)) > 4000)",
    ),
    "site's builtins": ("vendor.py", "PAGES = 3", "PAGES = 3 + ('exit' not in __builtins__)"),
    "the int-to-string limit": ("vendor.py", "PAGES = 3", "PAGES = len(str(10**4000)) - 3998"),
    "the Unicode database": ("vendor.py", "PAGES = 3", "PAGES = len(repr('\\U0001E030')) - 9"),
    "a set's order (the hash seed)": (
        "vendor.py",
        "PAGES = 3",
        "PAGES = 3 + (list({'pa', 'ge'})[0] == 'zz')",
    ),
    "str.format reads the command line": (
        "vendor.py",
        "PAGES = 3",
        "import sys\n\nPAGES = 3 + ('--strict' in '{0.argv}'.format(sys))",
    ),
    "a locale's number format": ("vendor.py", "PAGES = 3", "PAGES = len(f'{1000:n}') - 1"),
    # red team round 4: code that looks at itself sees what a restructure may change
    "a check reads its annotations": (
        "checks.py",
        "    return total / LIMIT",
        "    return total / LIMIT + 0 * len(_ratio.__annotations__)",
    ),
    "a check reads its line number": (
        "checks.py",
        "    return total / LIMIT",
        "    return total / LIMIT + _ratio.__code__.co_firstlineno % 2",
    ),
    "a check reads which module holds a class": (
        "checks.py",
        "    return total / LIMIT",
        "    return total / LIMIT + ('.' in Evidence.__module__)",
    ),
    "a global read by a name computed": (
        "checks.py",
        "    return total / LIMIT",
        "    return total / globals()['LIM' + 'IT']",
    ),
    "a global read by getattr of the module": (
        "checks.py",
        "    return total / LIMIT",
        "    return total / getattr(__import__('sys').modules[__name__], 'LIM' + 'IT')",
    ),
    "code evaluated from a string": (
        "checks.py",
        "    return total / LIMIT",
        "    return eval('total / LIMIT')",
    ),
    "a constant's identity": (
        "checks.py",
        "    return total / LIMIT",
        "    return total / LIMIT if LIMIT is not 4 else 0.0",
    ),
    "a parameter annotation that runs code": (
        "checks.py",
        "def _ratio(ev: Evidence, extra: int = 0) -> float:",
        "def _ratio(ev: Evidence, extra: int = 0) -> 'print() or float':",
    ),
    "a class attribute annotation that runs code": (
        "vendor.py",
        "    wide: bool = False",
        "    wide: '__import__(\"os\").getpid() and bool' = False",
    ),
    "a check lists the suite's folder": (
        "checks.py",
        "    return total / LIMIT",
        "    return total / LIMIT + (len(list(HERE.iterdir())) > 99)",
    ),
    "a check reads a file's time": (
        "checks.py",
        "    return total / LIMIT",
        "    return total / LIMIT + ((HERE / 'data.txt').stat().st_mtime < 0)",
    ),
    "a new class whose metaclass evaluates its annotations": (
        "evidence.py",
        "class Evidence:",
        "class _Model(__import__('enum').Enum):\n    A: 'print() or int' = 1\n\n\nclass Evidence:",
    ),
    "a module __getattr__ serves the value": (
        "vendor.py",
        "PAGES = 3",
        "def __getattr__(name: str) -> int:\n    if name == 'PAGES':\n        return 3\n"
        "    raise AttributeError(name)",
    ),
}


@pytest.mark.unit
@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_an_edit_that_changes_grading_is_refused(
    mutation: str, described: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    name, before, after = MUTATIONS[mutation]
    got = _differs(described, tmp_path, {name: (before, after)})
    assert got, mutation
    assert all("\n" not in line for line in got)


@pytest.mark.unit
def test_a_data_file_changed_or_added_is_refused(old: Path, tmp_path: Path) -> None:
    new = _tree(tmp_path / "new", PACKAGE)
    (new / "data.txt").write_text("another fixture\n")
    (new / "extra.yml").write_text("x: 1\n")
    assert same_definitions(REPO_ROOT, old, new, {}) == [
        "suite/extra.yml: only in the work tree",
        "suite/data.txt: its bytes changed",
    ]


@pytest.mark.unit
def test_a_python_file_the_load_does_not_run_must_be_the_same(old: Path, tmp_path: Path) -> None:
    new = _tree(tmp_path / "new", {**PACKAGE, "later.py": "import os\nos.remove('x')\n"})
    assert same_definitions(REPO_ROOT, old, new, {}) == [
        "suite/later.py: not run by the load, and not the same on both sides"
    ]


@pytest.mark.unit
def test_the_real_meridian_ledger_suite_is_the_same_as_itself() -> None:
    suite_dir = REPO_ROOT / "scenarios" / "apps" / "meridian-ledger" / "suite"
    started = time.monotonic()
    old, new = describe(REPO_ROOT, [(suite_dir, {}), (suite_dir, {})])
    assert compare_graphs(old, new) == []
    assert time.monotonic() - started < 120
    modules = sorted(p.name for p in suite_dir.glob("*.py") if p.name != "__init__.py")
    assert len(old["nodes"]) > 100 and old["modules"] == modules


def _ledger_as_package(suite_py: str) -> str:
    """The ledger's suite with its loader helper a relative import (a split's first step),
    an import run reordered and an annotation added."""
    start = suite_py.index("def _load_vendor()")
    end = suite_py.index("V = _load_vendor()\n") + len("V = _load_vendor()\n")
    plumbing = (
        "__path__ = [str(HERE)]\n__package__ = __name__\nif __spec__ is not None:\n"
        "    __spec__.submodule_search_locations = __path__\n\n"
        "from . import vendor as vendor_mod  # noqa: E402\n"
    )
    text = suite_py[:start] + plumbing + suite_py[end:]
    text = re.sub(r"\bV\.", "vendor_mod.", text).replace("import importlib.util\n", "")
    text = text.replace("import itertools\nimport json\n", "import json\nimport itertools\n")
    return text.replace("LOAD_REQUESTS = 40", "LOAD_REQUESTS: int = 40")


#: the last commit with meridian-ledger's suite as one file and a loader (before the split)
BEFORE_SPLIT = "1c0c1ed"


def _old_ledger(into: Path) -> Path:
    """meridian-ledger's suite folder as ``BEFORE_SPLIT`` held it."""
    folder = "scenarios/apps/meridian-ledger/suite"
    archive = subprocess.run(
        ["git", "-C", str(REPO_ROOT), "archive", BEFORE_SPLIT, folder],
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / folder


@pytest.mark.unit
def test_the_real_ledger_split_and_its_loader_rewrites(tmp_path: Path) -> None:
    old = _old_ledger(tmp_path / "old")
    real = REPO_ROOT / "scenarios" / "apps" / "meridian-ledger" / "suite"
    new, broken, shipped = (tmp_path / n / "suite" for n in ("new", "broken", "shipped"))
    for folder in (new, broken):
        shutil.copytree(old, folder)
    # the split as it shipped, before the carry rewrote its thresholds and their pin
    shutil.copytree(real, shipped, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(old / "thresholds.yml", shipped / "thresholds.yml")
    pin = re.compile(r'thresholds_pin="[0-9a-f]{64}"')
    (old_pin,) = pin.findall((old / "suite.py").read_text())
    grader = shipped / "grader.py"
    grader.write_text(pin.sub(old_pin, grader.read_text()))
    package = _ledger_as_package((old / "suite.py").read_text())
    (new / "suite.py").write_text(package)
    # the same rewrite done naively: ``vendor.`` is a local of context() as well
    (broken / "suite.py").write_text(package.replace("vendor_mod", "vendor"))
    graphs = describe(REPO_ROOT, [(old, {}), (new, {}), (broken, {}), (shipped, {})])
    assert compare_graphs(graphs[0], graphs[1]) == []
    (why,) = compare_graphs(graphs[0], graphs[2])
    assert why.startswith("context (suite.py:")
    assert compare_graphs(graphs[0], graphs[3]) == []  # the split that shipped


@pytest.mark.unit
def test_the_suite_s_folder_written_out_as_the_prover_saw_it_is_refused(
    described: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    """Equal where the prover loads it, another folder wherever else the suite is scored:
    the Suite's own binding is compared as written (but the files its era lists)."""
    here = tmp_path / "new" / "scenario" / "suite"
    fixed = f"HERE = Path({str(here)!r})"
    got = _differs(
        described, tmp_path, {"checks.py": ("HERE = Path(__file__).resolve().parent", fixed)}
    )
    assert got
