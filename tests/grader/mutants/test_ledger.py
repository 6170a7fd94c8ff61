"""The mutant ledger: only the lines the current scorer wrote count (a scenario without a
suite is its own scorer), scored with the scenario's triage."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness.grader.mutants.ledger import MUTANTS_LEDGER, current_score, ledger_lines, scorer_of
from harness.grader.mutants.score import MutantLine
from harness.scenario.load import load_scenario
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.unit


def _line(mutant: str, outcome: str, scorer: str) -> str:
    return MutantLine(
        mutant=mutant, seed="s", sandbox="local", digest="d", reference="r", scorer=scorer,
        outcome=outcome,  # type: ignore[arg-type]
    ).model_dump_json()  # fmt: skip


def test_only_the_current_scorer_s_lines_count(tmp_path: Path) -> None:
    folder = tmp_path / "smoke" / "x"
    shutil.copytree(REPO_ROOT / "scenarios" / "smoke" / "py-fast", folder)
    loaded = load_scenario("smoke/x", tmp_path)
    assert scorer_of(loaded) == loaded.sha256  # no suite: the scenario's content
    lines = [
        _line("a.py:1:core/X:0", "killed", loaded.sha256),
        _line("a.py:2:core/X:0", "survived", loaded.sha256),
        _line("a.py:3:core/X:0", "survived", loaded.sha256),
        _line("a.py:9:core/X:0", "survived", "an-older-scorer"),
    ]
    (folder / MUTANTS_LEDGER).write_text("\n".join(lines) + "\n")
    (folder / "mutants.yml").write_text("equivalent:\n  'a.py:3:core/X:0': same output\n")
    loaded = load_scenario("smoke/x", tmp_path)  # evidence files: the same content hash
    assert [line.mutant for line in ledger_lines(loaded)] == [
        "a.py:1:core/X:0",
        "a.py:2:core/X:0",
        "a.py:3:core/X:0",
    ]
    score = current_score(loaded)
    assert (score.killed, score.survived, score.equivalent) == (
        ["a.py:1:core/X:0"],
        ["a.py:2:core/X:0"],
        ["a.py:3:core/X:0"],
    )
    assert score.judged == 2
