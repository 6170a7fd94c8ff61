"""A src-layout project's package is importable by the hidden tests, as if installed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harness.verify.python.boot import PYTEST_SRC, pytest_boot
from harness.verify.python.layout import src_layout
from harness.verify.python.run import run_pytest


def src_project(root: Path, packaging: str = 'package-dir = {"" = "src"}\n') -> Path:
    (root / "src" / "calc").mkdir(parents=True)
    (root / "src" / "calc" / "__init__.py").write_text("def add(a, b):\n    return a + b\n")
    (root / "pyproject.toml").write_text(f"[tool.setuptools]\n{packaging}")
    (root / "tests").mkdir()
    (root / "tests" / "__init__.py").write_text("")
    (root / "tests" / "test_calc.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    )
    return root


@pytest.mark.unit
def test_a_declared_src_package_is_a_src_layout(tmp_path: Path) -> None:
    assert src_layout(src_project(tmp_path))
    assert PYTEST_SRC in pytest_boot(tmp_path)


@pytest.mark.unit
def test_a_src_package_that_no_packaging_file_names_is_a_src_layout(tmp_path: Path) -> None:
    """Issue 50: flit finds src/<package> by itself; tomli's pyproject.toml never names
    src, and its package did not import (the miner called the fix a failure)."""
    tree = src_project(tmp_path)
    (tree / "pyproject.toml").write_text(
        '[build-system]\nbuild-backend = "flit_core.buildapi"\n[project]\nname = "calc"\n'
    )
    assert src_layout(tree)


@pytest.mark.unit
@pytest.mark.parametrize("case", ["no-packaging-file", "src-is-a-package", "no-package"])
def test_other_trees_keep_only_their_root_on_the_path(tmp_path: Path, case: str) -> None:
    tree = src_project(tmp_path)
    if case == "no-packaging-file":
        (tree / "pyproject.toml").unlink()
    elif case == "src-is-a-package":
        (tree / "src" / "__init__.py").write_text("")
    else:
        (tree / "src" / "calc" / "__init__.py").unlink()
        (tree / "src" / "calc" / "notes.txt").write_text("not code\n")
    assert not src_layout(tree)
    assert PYTEST_SRC not in pytest_boot(tree)
    assert "{src}" not in pytest_boot(tree)


@pytest.mark.integration
def test_hidden_tests_import_a_src_layout_package(tmp_path: Path) -> None:
    tree = src_project(tmp_path / "tree")
    result = run_pytest("tests/test_calc.py", "required", tree, {}, 120, sys.executable)
    assert result.ok, result.tests[0].output if result.tests else result.error
    assert [t.name for t in result.tests if t.passed] == ["tests.test_calc::test_add"]


@pytest.mark.integration
def test_the_tree_root_keeps_precedence_over_src(tmp_path: Path) -> None:
    tree = src_project(tmp_path / "tree")
    (tree / "calc.py").write_text("def add(a, b):\n    return 0\n")
    result = run_pytest("tests/test_calc.py", "required", tree, {}, 120, sys.executable)
    assert not result.ok
    assert [t.passed for t in result.tests] == [False]
