"""A skip raised by the agent's code fails its test; the suite's own skips stay skips."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harness.verify.python.agent_files import listing
from harness.verify.runners import run_target

pytestmark = pytest.mark.integration

# clamp unfixed, skipping wherever its answer would be wrong
AGENT = """import unittest

import pytest


def clamp(value, low, high):
    if value < low:
        raise unittest.SkipTest("not applicable")
    if value > high:
        pytest.skip("not applicable either")
    return value
"""
HIDDEN = """import pytest

from calc import clamp


def test_inside():
    assert clamp(3, 0, 10) == 3


def test_below():
    assert clamp(-5, 0, 10) == 0


def test_above():
    assert clamp(15, 0, 10) == 10


@pytest.fixture
def low():
    return clamp(-1, 0, 10)


def test_through_a_fixture(low):
    assert low == 0


@pytest.mark.skipif(True, reason="the suite's own marker")
def test_marked():
    raise AssertionError


def test_optional_dependency():
    pytest.importorskip("harness_no_such_module")


@pytest.mark.xfail(reason="the suite expects this to fail", strict=True)
def test_expected_failure():
    assert clamp(3, 0, 10) == 4
"""


def _tree(tmp_path: Path, agent: str) -> Path:
    tree = tmp_path / "tree"
    (tree / "calc").mkdir(parents=True)
    (tree / "calc" / "__init__.py").write_text(agent)
    (tree / "test_hidden.py").write_text(HIDDEN)
    return tree


def _run(tree: Path, charged: bool):  # type: ignore[no-untyped-def]
    files = (["calc/__init__.py"], ["test_hidden.py"]) if charged else ((), ())
    return run_target(
        "pytest", "test_hidden.py", "required", tree, seed="s", timeout=120,
        python=sys.executable, canary=True, agent_files=files,
    )  # fmt: skip


def test_the_agent_s_skips_fail_and_the_suite_s_stay_skips(tmp_path: Path) -> None:
    tree = _tree(tmp_path, AGENT)
    blind = _run(tree, charged=False)
    assert blind.ok  # without the charge, skipping what fails passes the target
    result = _run(tree, charged=True)
    assert not result.ok
    failed = {c.name.split("::")[-1]: c.output for c in result.tests if not c.passed}
    assert set(failed) == {"test_below", "test_above", "test_through_a_fixture"}
    assert "skipped by the code under test at calc/__init__.py:8" in failed["test_below"]
    passed = {c.name.split("::")[-1] for c in result.tests if c.passed}
    assert passed == {"test_inside"}  # the marked skip, the importorskip, the xfail: left out


def test_a_module_skipped_by_the_agent_s_import_is_a_collection_error(tmp_path: Path) -> None:
    tree = _tree(tmp_path, 'import unittest\n\nraise unittest.SkipTest("whole module")\n')
    (tree / "test_other.py").write_text("def test_unrelated():\n    pass\n")
    files = (["calc/__init__.py"], ["test_hidden.py"])
    result = run_target(
        "pytest", "test_hidden.py test_other.py", "required", tree, seed="s", timeout=120,
        python=sys.executable, canary=True, agent_files=files,
    )  # fmt: skip
    assert not result.ok
    assert any("skipped at collection by the code under test" in c.output for c in result.tests)


# the importing test module's own AssertionError bound to SkipTest (builtins untouched):
# its failing asserts raise a skip from the test file, no frame of the agent's on the way
MODULE_SKIP = """import sys, unittest

frame = sys._getframe(1)
while frame is not None:
    if frame.f_globals.get("__name__") == "test_hidden":
        frame.f_globals["AssertionError"] = unittest.SkipTest
    frame = frame.f_back


def clamp(value, low, high):
    return value
"""


def test_a_skip_raised_by_a_failing_assert_fails(tmp_path: Path) -> None:
    result = _run(_tree(tmp_path, MODULE_SKIP), charged=True)
    assert not result.ok
    failed = {c.name.split("::")[-1]: c.output for c in result.tests if not c.passed}
    assert {"test_below", "test_above"} <= set(failed)
    assert "the assert statement at test_hidden.py:" in failed["test_below"]
    passed = {c.name.split("::")[-1] for c in result.tests if c.passed}
    assert passed == {"test_inside"}  # the suite's own skips stay skips


FAILURE_SKIP = """import sys, unittest

frame = sys._getframe(1)
while frame is not None:
    if frame.f_globals.get("__name__") == "test_hidden":
        space = frame.f_globals
        break
    frame = frame.f_back


def clamp(value, low, high):
    for obj in list(space.values()):
        if isinstance(obj, type) and issubclass(obj, unittest.TestCase):
            obj.failureException = unittest.SkipTest
    return value
"""
UNITTEST_HIDDEN = """import unittest

from calc import clamp


class TestClamp(unittest.TestCase):
    def test_below(self):
        self.assertEqual(clamp(-5, 0, 10), 0)

    def test_inside(self):
        self.assertEqual(clamp(3, 0, 10), 3)

    def test_own_skip(self):
        self.skipTest("the suite's own")
"""


def test_a_skip_raised_by_unittest_s_asserts_fails(tmp_path: Path) -> None:
    tree = _tree(tmp_path, FAILURE_SKIP)
    (tree / "test_hidden.py").write_text(UNITTEST_HIDDEN)
    result = _run(tree, charged=True)
    assert not result.ok
    failed = {c.name.split("::")[-1]: c.output for c in result.tests if not c.passed}
    assert set(failed) == {"test_below"}
    assert "unittest's assertEqual" in failed["test_below"]
    assert {c.name.split("::")[-1] for c in result.tests if c.passed} == {"test_inside"}
    # the agent's own SkipTest in a TestCase: unittest catches it, the charge still holds
    (tree / "calc" / "__init__.py").write_text(AGENT)
    result = _run(tree, charged=True)
    failed = {c.name.split("::")[-1]: c.output for c in result.tests if not c.passed}
    assert set(failed) == {"test_below"} and not result.ok
    assert "skipped by the code under test at calc/__init__.py:" in failed["test_below"]


def test_a_right_answer_is_untouched(tmp_path: Path) -> None:
    fixed = "def clamp(value, low, high):\n    return max(low, min(value, high))\n"
    result = _run(_tree(tmp_path, fixed), charged=True)
    assert result.ok, [(c.name, c.output) for c in result.tests if not c.passed]


@pytest.mark.unit
def test_the_listing_holds_the_agent_s_python_files_only() -> None:
    text = listing(["calc/__init__.py", "README.md", "test_hidden.py", "bad\nname.py"],
                   ["test_hidden.py"])  # fmt: skip
    assert text == "calc/__init__.py\n"
