"""A test whose expected values the twin changed must not pass both runs."""

from __future__ import annotations

import pytest

from harness.verify.go.twin_verdict import forged
from harness.verify.outcome import TestCase as Case

pytestmark = pytest.mark.unit


def test_passing_a_changed_test_twice_is_forged() -> None:
    original = [Case(name="TestA", passed=True), Case(name="TestB", passed=True)]
    twin = [Case(name="TestA", passed=True), Case(name="TestB", passed=False)]
    why = forged(original, twin, ["TestA", "TestB"])
    assert why is not None and why.startswith("TestA passes with its expected values changed")


def test_honest_code_fails_the_changed_tests() -> None:
    original = [Case(name="TestA", passed=True), Case(name="TestB", passed=True)]
    twin = [Case(name="TestA", passed=False), Case(name="TestB", passed=True)]
    assert forged(original, twin, ["TestA"]) is None  # TestB was not changed
    assert forged([Case(name="TestA", passed=False)], twin, ["TestA"]) is None
    synthetic = [Case(name="TestA", passed=True, synthetic=True)]
    assert forged(synthetic, synthetic, ["TestA"]) is None
