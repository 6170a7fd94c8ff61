"""The scenario's mutant ledger, ``mutants.jsonl``: which lines count, and their score.

Apart from ``run`` (which needs the mutation library) so that the controls, coverage
and the board read the score where the library is not installed.
"""

from __future__ import annotations

from harness.grader.calibration_ledger import read_lines
from harness.grader.mutants.score import MutantLine, MutationScore, mutation_score
from harness.grader.mutants.triage import equivalents
from harness.scenario.model import LoadedScenario
from harness.scoring.era import code_fingerprint
from harness.verify.scoring_bridge import load_suite_module

MUTANTS_LEDGER = "mutants.jsonl"


def scorer_of(loaded: LoadedScenario) -> str:
    """What a mutant line counts for: the suite's code fingerprint, else the scenario's
    content (its hidden tests and rules)."""
    suite = loaded.scenario.verify.suite
    if suite:
        return code_fingerprint(load_suite_module(loaded.directory / suite).suite)
    return loaded.sha256


def ledger_lines(loaded: LoadedScenario) -> list[MutantLine]:
    """The lines of the scenario's mutant ledger that the current scorer wrote."""
    scorer = scorer_of(loaded)
    lines = read_lines(loaded.directory / MUTANTS_LEDGER, MutantLine)
    return [line for line in lines if line.scorer == scorer]


def current_score(loaded: LoadedScenario) -> MutationScore:
    """The mutation score of the current scorer, from the ledger and the triage."""
    return mutation_score(ledger_lines(loaded), equivalents(loaded.directory))


__all__ = ["MUTANTS_LEDGER", "current_score", "ledger_lines", "scorer_of"]
