"""One pytest target run as the verifier runs it (verify/python/run.py): real pytest on
small trees, no test user."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harness.verify.python.run import run_pytest

pytestmark = pytest.mark.integration

CALC = "def add(a, b):\n    return a + b\n"


def tree_with(tmp_path: Path, tests: str, calc: str = CALC) -> Path:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "calc.py").write_text(calc)
    (tree / "test_hidden.py").write_text("from calc import add\n\n\n" + tests)
    return tree


PASSING = "def test_add():\n    assert add(2, 3) == 5\n"


def test_a_passing_target_and_the_command_it_shows(tmp_path: Path) -> None:
    tree = tree_with(tmp_path, PASSING)
    got = run_pytest("test_hidden.py", "required", tree, {}, 120, sys.executable)
    assert got.ok and got.exit_code == 0 and got.error is None and got.env_error is None
    assert [(c.name, c.passed) for c in got.tests] == [("test_hidden::test_add", True)]
    assert got.command[0] == Path(sys.executable).name
    assert got.command[1:4] == [
        "-s",
        "-c",
        "<harness: import pytest before the tree is on sys.path>",
    ]
    assert got.command[-1] == "test_hidden.py" and f"--rootdir={tree}" in got.command
    assert got.duration_s > 0


def test_a_failing_test_fails_the_target(tmp_path: Path) -> None:
    tree = tree_with(tmp_path, PASSING, calc="def add(a, b):\n    return a - b\n")
    got = run_pytest("test_hidden.py", "partial", tree, {}, 120, sys.executable)
    assert not got.ok and got.exit_code == 1 and got.kind == "partial"
    assert [c.passed for c in got.tests] == [False] and got.error is None


def test_a_target_with_no_tests_is_one_synthetic_failure(tmp_path: Path) -> None:
    tree = tree_with(tmp_path, "X = 1\n")
    got = run_pytest("test_hidden.py", "required", tree, {}, 120, sys.executable)
    assert not got.ok and got.exit_code == 5
    assert got.error == "pytest ran no tests (exit 5)"
    assert len(got.tests) == 1 and got.tests[0].synthetic and not got.tests[0].passed


def test_a_target_past_its_timeout_is_a_timeout(tmp_path: Path) -> None:
    slow = "import time\n\n\ndef test_slow():\n    time.sleep(60)\n"
    got = run_pytest("test_hidden.py", "required", tree_with(tmp_path, slow), {}, 2, sys.executable)
    assert not got.ok and got.error == "timeout" and got.exit_code is None


def test_collect_only_is_the_build_of_validate_deep(tmp_path: Path) -> None:
    tree = tree_with(tmp_path, PASSING)
    got = run_pytest("--collect-only test_hidden.py", "required", tree, {}, 120, sys.executable)
    assert got.ok and got.exit_code == 0 and got.tests == []
    (tmp_path / "b").mkdir()
    broken = tree_with(tmp_path / "b", "import no_such_module\n" + PASSING)
    bad = run_pytest("--collect-only test_hidden.py", "required", broken, {}, 120, sys.executable)
    assert not bad.ok and bad.exit_code not in (0, None)


def test_the_canary_fails_and_is_taken_out(tmp_path: Path) -> None:
    tree = tree_with(tmp_path, PASSING)
    got = run_pytest("test_hidden.py", "required", tree, {}, 120, sys.executable, canary=True)
    assert got.ok and got.exit_code == 0  # only the canary failed, as it must
    assert [c.name for c in got.tests] == ["test_hidden::test_add"]
    assert got.command[-1] == "<harness: a canary test that must fail>"
    assert sorted(p.name for p in tree.iterdir()) == ["calc.py", "test_hidden.py"]


def test_the_listings_reach_the_plugins(tmp_path: Path) -> None:
    # the agent's add reads the hidden test as it runs: the peek guard, which knows the
    # agent's files and the hidden ones only through the two listings, fails the test
    peek = "def add(a, b):\n    open('test_hidden.py').read()\n    return a + b\n"
    tree = tree_with(tmp_path, PASSING, calc=peek)
    files = (["calc.py"], ["test_hidden.py"])
    caught = run_pytest(
        "test_hidden.py", "required", tree, {}, 120, sys.executable, agent_files=files
    )
    assert not caught.ok and "test_hidden.py" in caught.tests[0].output
    unlisted = run_pytest("test_hidden.py", "required", tree, {}, 120, sys.executable)
    assert unlisted.ok


def test_code_that_ends_the_run_with_exit_0_passes_nothing(tmp_path: Path) -> None:
    quits = "import os\n\n\ndef add(a, b):\n    os._exit(0)\n"
    got = run_pytest(
        "test_hidden.py", "required", tree_with(tmp_path, PASSING, calc=quits), {}, 120,
        sys.executable,
    )  # fmt: skip
    assert got.exit_code == 0 and not got.ok
    assert got.error is not None and "exit 0" in got.error
