"""The code under test may not read the hidden tests while they run
(verify/python/plugins/peek_guard.py, played in real pytest runs)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harness.verify.outcome import TargetResult
from harness.verify.python.run import run_pytest

pytestmark = pytest.mark.integration

HIDDEN = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def run(
    tmp_path: Path, calc: str, *, hidden: str = HIDDEN, changed: str = "calc.py"
) -> TargetResult:
    tree = tmp_path / "tree"
    tree.mkdir(parents=True, exist_ok=True)
    (tree / "calc.py").write_text(calc)
    (tree / "test_hidden.py").write_text(hidden)
    (tree / "data.txt").write_text("5\n")
    files = ([changed], ["test_hidden.py", "data.txt"])  # the controller lists .py only
    return run_pytest("test_hidden.py", "required", tree, {}, 120, sys.executable,
                      agent_files=files)  # fmt: skip


def test_a_read_of_a_hidden_test_by_the_agents_code_fails_the_test(tmp_path: Path) -> None:
    peek = "def add(a, b):\n    open('test_hidden.py').read()\n    return a + b\n"
    got = run(tmp_path, peek)
    assert not got.ok and [c.passed for c in got.tests] == [False]
    out = got.tests[0].output
    assert "the code under test read the hidden tests: calc.py:2 read test_hidden.py" in out


def test_a_read_at_import_fails_the_collection(tmp_path: Path) -> None:
    got = run(
        tmp_path, "SRC = open('test_hidden.py').read()\n\n\ndef add(a, b):\n    return a + b\n"
    )
    assert not got.ok
    assert any("collecting" in c.output and "read the hidden tests" in c.output for c in got.tests)


def test_inspecting_the_callers_source_is_a_read(tmp_path: Path) -> None:
    stack = "import inspect\n\n\ndef add(a, b):\n    inspect.stack()\n    return a + b\n"
    assert not run(tmp_path, stack).ok


def test_what_is_no_peek_passes(tmp_path: Path) -> None:
    data = "def add(a, b):\n    open('data.txt').read()\n    return a + b\n"
    assert run(tmp_path, data).ok  # the hidden tests' data files stay readable
    own = HIDDEN.replace("def test_add():\n", "def test_add():\n    open(__file__).read()\n")
    assert run(tmp_path / "own", "def add(a, b):\n    return a + b\n", hidden=own).ok
    # a file the agent did not change is not the agent's code
    peek = "def add(a, b):\n    open('test_hidden.py').read()\n    return a + b\n"
    assert run(tmp_path / "other", peek, changed="other.py").ok
    # a file of the same name elsewhere is not the hidden test
    copy = "def add(a, b):\n    open('sub/test_hidden.py').read()\n    return a + b\n"
    (tmp_path / "copy" / "tree" / "sub").mkdir(parents=True)
    (tmp_path / "copy" / "tree" / "sub" / "test_hidden.py").write_text("x = 1\n")
    assert run(tmp_path / "copy", copy).ok
    # looking at the caller's frame reads no source
    caller = "import sys\n\n\ndef add(a, b):\n    sys._getframe(1)\n    return a + b\n"
    assert run(tmp_path / "frame", caller).ok
