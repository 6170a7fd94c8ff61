"""harness's Python mutation operators do what their examples say, and the site list
names only real changes."""

from __future__ import annotations

import pytest
from cosmic_ray.mutating import mutate_code

from harness.grader.mutants import python_ops

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("name", sorted(python_ops.HARNESS_OPERATORS))
def test_each_operator_does_what_its_examples_say(name: str) -> None:
    operator = python_ops.HARNESS_OPERATORS[name]
    for example in operator.examples():
        got = mutate_code(example.pre_mutation_code, operator(), example.occurrence)
        assert got == example.post_mutation_code, (name, example)


def test_sites_on_given_lines_only_and_each_changes_the_source() -> None:
    source = "def f(a, b):\n    x = a + b\n    return x > 2.5\n"
    every = list(python_ops.sites(source))
    on_three = list(python_ops.sites(source, {3}))
    assert on_three and all(s.line == 3 for s in on_three)
    assert {s.line for s in every} == {2, 3}
    for site in every:
        mutated = python_ops.apply(source, site)
        assert mutated is not None and mutated != source, site


def test_float_zero_and_sql_free_strings_make_no_mutant() -> None:
    source = "x = 0.0\ny = 'ORDER BY is only words here'\n"
    names = {s.operator for s in python_ops.sites(source)}
    assert "harness/FloatNudge" not in names and "harness/SqlClause" not in names


def test_a_with_block_over_a_lock_is_no_transaction() -> None:
    source = "with self.lock:\n    a()\n    b()\n"
    assert not [s for s in python_ops.sites(source) if s.operator == "harness/SplitTransaction"]
