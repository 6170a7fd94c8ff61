"""``harness mutants`` through the real verifier: survivors are listed (exit 1), every
scoring is a ledger line in the scenario, a second run reads them, and a survivor
triaged equivalent leaves the score's denominator (exit 0)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.calc import harness, write_calc

pytestmark = pytest.mark.integration

ADD = "calc.py:2:core/ReplaceBinaryOperator_Add_{}:0"


def scenario(project: Path, tmp_path: Path) -> Path:
    folder = write_calc(project, tmp_path / "src", extra="solution: solution\n")
    (folder / "solution").mkdir()
    (folder / "solution" / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    # a weak hidden test: 2 + 2 == 2 * 2 == 2 ** 2, so two mutants survive it
    (folder / "hidden" / "test_hidden_calc.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n"
    )
    return folder


def test_mutants_are_scored_listed_kept_and_triaged(project: Path, tmp_path: Path) -> None:
    folder = scenario(project, tmp_path)
    listed = harness(project, "mutants", "t/calc", "--list", "--sample", "50")
    assert listed.returncode == 0, listed.stderr
    assert ADD.format("Mul") in listed.stdout and ADD.format("Sub") in listed.stdout
    picks = [f"--mutant={ADD.format(op)}" for op in ("Sub", "Mul", "Pow")]
    first = harness(project, "mutants", "t/calc", "--sandbox", "local", *picks)
    assert first.returncode == 1, first.stdout + first.stderr
    assert f"survived: {ADD.format('Mul')}" in first.stdout
    assert f"survived: {ADD.format('Pow')}" in first.stdout
    assert "mutation score 0.333: 1 killed of 3" in first.stdout
    lines = [json.loads(x) for x in (folder / "mutants.jsonl").read_text().splitlines()]
    assert sorted(x["outcome"] for x in lines) == ["killed", "survived", "survived"]
    assert all(x["sandbox"] == "local" and x["scorer"] for x in lines)
    (folder / "mutants.yml").write_text(
        "equivalent:\n"
        f"  '{ADD.format('Mul')}': contrived for the test\n"
        f"  '{ADD.format('Pow')}': contrived for the test\n"
    )
    again = harness(project, "mutants", "t/calc", "--sandbox", "local", *picks)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "3 mutants scored (3 from the ledger)" in again.stdout
    assert "mutation score 1.000: 1 killed of 1 (0 survived, 2 equivalent)" in again.stdout


def test_a_failing_reference_judges_no_mutant(project: Path, tmp_path: Path) -> None:
    folder = scenario(project, tmp_path)
    (folder / "solution" / "calc.py").write_text("def add(a, b):\n    return a * b + 1\n")
    out = harness(project, "mutants", "t/calc", "--sandbox", "local", "--sample", "2")
    assert out.returncode == 2 and "no mutant can be judged" in out.stderr
    assert not (folder / "mutants.jsonl").exists()
