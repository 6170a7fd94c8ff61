"""pytest's JUnit report parsed into per-test results (no subprocesses)."""

from __future__ import annotations

import pytest

from harness.verify.python.junit import parse_junit

pytestmark = pytest.mark.unit


def test_junit_parsing() -> None:
    xml = """<testsuites><testsuite>
      <testcase classname="t.test_a" name="test_ok"/>
      <testcase classname="t.test_a" name="test_bad">
        <failure message="assert 1 == 2">trace</failure></testcase>
      <testcase classname="t.test_a" name="test_err"><error message="boom"/></testcase>
      <testcase classname="t.test_a" name="test_skip"><skipped/></testcase>
    </testsuite></testsuites>"""
    cases = parse_junit(xml)
    assert [(c.name.split("::")[1], c.passed) for c in cases] == [
        ("test_ok", True),
        ("test_bad", False),
        ("test_err", False),
    ]
    assert "assert 1 == 2" in cases[1].output and cases[2].error == "error"
