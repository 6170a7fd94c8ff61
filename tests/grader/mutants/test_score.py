"""The mutation score's arithmetic and the MUTATION control."""

from __future__ import annotations

import pytest

from harness.grader.mutants.score import MutantLine, mutation_control, mutation_score

pytestmark = pytest.mark.unit


def line(mutant: str, outcome: str) -> MutantLine:
    return MutantLine(
        mutant=mutant,
        seed="s",
        sandbox="local",
        digest="d",
        reference="r",
        scorer="x",
        outcome=outcome,  # type: ignore[arg-type]
    )


def test_tally_counts_timeouts_as_killed_and_leaves_errors_and_equivalents_out() -> None:
    lines = [
        line("a", "killed"),
        line("b", "timeout"),
        line("c", "survived"),
        line("d", "survived"),
        line("e", "error"),
        line("f", "killed"),
    ]
    found = mutation_score(lines, {"d": "same behaviour", "f": "triaged wrongly"})
    assert found.killed == ["a", "b", "f"] and found.survived == ["c"]
    assert found.equivalent == ["d"] and found.errors == ["e"]
    assert found.killed_equivalent == ["f"]
    assert found.judged == 4 and found.score == pytest.approx(0.75)


def test_the_newest_line_of_a_mutant_counts() -> None:
    found = mutation_score([line("a", "survived"), line("a", "killed")], {})
    assert found.killed == ["a"] and not found.survived


def test_the_control_needs_the_sample_and_the_score() -> None:
    many = [line(f"m{i}", "killed") for i in range(99)]
    assert not mutation_control(mutation_score(many, {})).passed  # 99 < 100
    passed = mutation_control(mutation_score([*many, line("x", "killed")], {}))
    assert passed.passed and passed.control == "MUTATION"
    weak = [*many[:94], *(line(f"s{i}", "survived") for i in range(6))]
    failed = mutation_control(mutation_score(weak, {}))
    assert not failed.passed and "s0" in failed.detail
