"""``harness run``'s options: comma lists, seeds, cassettes, concurrency, and the flags laid
over a job file (a flag left at its default takes the file's value)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli.job_options import (
    check_cassette,
    check_concurrency,
    check_seeds,
    merge_flags,
    split_values,
)
from harness.errors import UserError
from harness.job.jobfile import JobFile

pytestmark = pytest.mark.unit


def test_comma_lists_join_in_order_without_duplicates() -> None:
    assert split_values(["a,b", "c", " b , d ,", ""]) == ["a", "b", "c", "d"]
    assert split_values(None) == []


def test_seeds_and_concurrency_are_checked() -> None:
    assert check_seeds(["00C0FFEE00C0FFEE", "0000000000000001"]) == [
        "00c0ffee00c0ffee",
        "0000000000000001",
    ]
    assert check_seeds([]) is None
    with pytest.raises(UserError, match="'xyz' is not 16 hex digits") as info:
        check_seeds(["xyz"])
    assert info.value.field == "--seeds"
    assert check_concurrency(None, "--concurrency") is None and check_concurrency(2, "x") == 2
    with pytest.raises(UserError, match="0 trials at once runs nothing") as info:
        check_concurrency(0, "concurrency (job.yaml)")
    assert info.value.field == "concurrency (job.yaml)"


def test_a_cassette_must_exist(tmp_path: Path) -> None:
    tape = tmp_path / "t.jsonl"
    tape.write_text("")
    assert check_cassette(tape) == tape.resolve()
    with pytest.raises(UserError, match="cassette not found") as info:
        check_cassette(tmp_path / "none.jsonl")
    assert info.value.field == "--replay"


def test_flags_over_a_job_file() -> None:
    file = JobFile(agents=["codex"], scenarios=["py/*"], reps=3, sandbox="local")
    merged = merge_flags(file, {"agents": ["mini"], "reps": 1, "sandbox": "docker"})
    assert merged.agents == ["mini"]  # given: the flag wins
    assert merged.reps == 3 and merged.sandbox == "local"  # left at the default: the file's
    assert merged.scenarios == ["py/*"]
    assert merge_flags(None, {"agents": ["a"]}) == JobFile(agents=["a"])
    with pytest.raises(UserError) as info:
        merge_flags(file, {"max_interruptions": -1})
    assert info.value.field == "--max-interruptions"
