"""Negative twins of Python test files: what is perturbed, and names kept (unit, plus one
pytest collection)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness.verify.pytwin import twin_source

pytestmark = pytest.mark.unit

SOURCE = b'''"""doc"""
from __future__ import annotations
import pytest
from calc import clamp, parse

CASES = [("0.29 USD", 29), ("1 JPY", 1)]


def test_plain():
    assert clamp(15, 0, 10) == 10
    assert (1, "x") == clamp(1, 2, 3)
    assert clamp(1, 2, 3) == pytest.approx(0.5)
    assert clamp(1, 2, 3) != 7


@pytest.mark.parametrize("v,expected", [(1, 1), pytest.param(-5, 0), pytest.param(3, 3, id="x")])
def test_table(v, expected):
    assert clamp(v, 0, 10) == expected


def test_loop():
    for s, want in CASES:
        assert parse(s) == want


class T:
    def test_unittest(self):
        self.assertEqual(clamp(1, 2, 3), -3)
'''


def test_the_compared_literals_are_perturbed_and_nothing_else() -> None:
    twin = twin_source(SOURCE)
    assert twin is not None
    text = twin.decode()
    assert "clamp(15, 0, 10) == 11" in text and "(2, 'x!') == clamp" in text
    assert "pytest.approx(1.5)" in text and "!= 7" in text  # != is not an expectation
    assert 'CASES = [("0.29 USD", 30), ("1 JPY", 2)]' in text  # only the compared field
    assert "assertEqual(clamp(1, 2, 3), -2)" in text
    assert "param(*(1, 2), id='1-1')" in text and "param(-5, 1, id='-5-0')" in text
    assert 'param(3, 4, id="x")' in text
    assert len(text.splitlines()) == len(SOURCE.decode().splitlines())  # lines kept


def test_nothing_to_perturb_is_no_twin() -> None:
    assert twin_source(b"def test_x():\n    assert f() != 3\n") is None
    assert twin_source(b"def test_x(:\n") is None


def test_a_twin_keeps_the_test_names(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text("def clamp(v, lo, hi):\n    return v\nparse = clamp\n")
    (tmp_path / "test_a.py").write_bytes(SOURCE)
    (tmp_path / "test_b.py").write_bytes(twin_source(SOURCE) or b"")
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=tmp_path, capture_output=True, text=True, check=False,
    ).stdout  # fmt: skip
    ids = [line.split("::", 1)[1] for line in out.splitlines() if "::" in line]
    a = [i for line, i in zip(out.splitlines(), ids, strict=False) if line.startswith("test_a")]
    b = [i for line, i in zip(out.splitlines(), ids, strict=False) if line.startswith("test_b")]
    assert a == b and "test_table[1-1]" in a
