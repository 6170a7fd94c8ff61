"""Mutant ids are stable, the sample is deterministic and spread over operator families,
and a mutant applies to its file."""

from __future__ import annotations

import pytest

from harness.grader.mutants.points import enumerate_tree, mutants_of, mutate, sample

pytestmark = pytest.mark.unit

PY = "def f(a, b):\n    if a < b:\n        return a + 1\n    return b * 2.0\n"
JS = "function g(x) { return x >= 10 && x !== 3; }\n"


def test_ids_name_file_line_operator_and_occurrence() -> None:
    mutants = mutants_of("pkg/m.py", PY, None)
    ids = [m.id for m in mutants]
    assert len(ids) == len(set(ids))
    assert "pkg/m.py:2:core/ReplaceComparisonOperator_Lt_LtE:0" in ids
    assert mutants == mutants_of("pkg/m.py", PY, None)


def test_only_changed_lines_and_known_kinds() -> None:
    files = {"a.py": PY, "b.js": JS, "c.txt": "a < b"}
    found = enumerate_tree(files, {"a.py": {3}, "b.js": None, "c.txt": None})
    assert {m.path for m in found} == {"a.py", "b.js"}
    assert all(m.line == 3 for m in found if m.path == "a.py")


def test_every_mutant_changes_its_file() -> None:
    for path, text in (("m.py", PY), ("g.js", JS)):
        for mutant in mutants_of(path, text, None):
            changed = mutate(text, mutant)
            assert changed is not None and changed != text, mutant.id


def test_sample_is_deterministic_and_spread_over_families() -> None:
    every = mutants_of("m.py", PY, None) + mutants_of("g.js", JS, None)
    first = sample(every, 8, "seed-a")
    assert first == sample(list(reversed(every)), 8, "seed-a")
    assert len({m.family for m in first}) >= 6  # round-robin: not 8 arithmetic swaps
    assert sample(every, 10_000, "s") and len(sample(every, 10_000, "s")) == len(every)
