"""The mutant triage (mutants.yml): equivalent mutants each with a reason, a bad file named."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import UserError
from harness.grader.mutants.triage import equivalents

pytestmark = pytest.mark.unit


def test_a_triage_without_a_reason_names_its_field(tmp_path: Path) -> None:
    (tmp_path / "mutants.yml").write_text("equivalent:\n  'a.py:1:core/X:0': ''\n")
    with pytest.raises(UserError) as err:
        equivalents(tmp_path)
    assert err.value.field == "equivalent.a.py:1:core/X:0"
    (tmp_path / "mutants.yml").write_text("equivalent:\n  'a.py:1:core/X:0': same output\n")
    assert equivalents(tmp_path) == {"a.py:1:core/X:0": "same output"}


def test_no_file_is_no_triage_and_a_bad_one_is_named(tmp_path: Path) -> None:
    assert equivalents(tmp_path) == {}
    for text, words in (
        ("equivalent: [a]\n", "not a mapping"),
        ("- a\n", "not a mapping"),
        ("equivalent: {\n", "cannot read the mutant triage"),
    ):
        (tmp_path / "mutants.yml").write_text(text)
        with pytest.raises(UserError, match=words) as err:
            equivalents(tmp_path)
        assert err.value.field == "equivalent"
    (tmp_path / "mutants.yml").write_text("")
    assert equivalents(tmp_path) == {}
