"""The grader line of a fresh clone's first trial (issue 49): a scenario never proven on
this machine (no controls.json: every shipped scenario on a fresh clone) says so quietly,
with the command that proves it; a proof made here, held or withdrawn, speaks for itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.scenario.load import load_scenario
from harness.trial.reporting import unproven_verdict
from harness.verify.proof import grader_verdict
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.unit

NAME = "py/ledger-rounding"  # the README's quick start


def test_a_fresh_clone_is_told_how_to_prove_not_alarmed(tmp_path: Path) -> None:
    loaded = load_scenario(NAME, REPO_ROOT / "scenarios")
    results = tmp_path / "results"
    plain = grader_verdict(results, NAME, loaded.sha256)
    assert plain.startswith("GRADER NOT PROVEN")  # what every shipped scenario said
    quiet = unproven_verdict(plain, results, loaded)
    assert quiet == (
        f"not proven on this machine yet (`harness controls {NAME}` proves its grader here)"
    )


@pytest.mark.parametrize(
    "verdict", ["GRADER TRUSTED", "GRADER NOT TRUSTED", "GRADER NOT PROVEN (scenario changed)"]
)
def test_a_proof_made_here_speaks_for_itself(tmp_path: Path, verdict: str) -> None:
    loaded = load_scenario(NAME, REPO_ROOT / "scenarios")
    results = tmp_path / "results"
    (results / NAME).mkdir(parents=True)
    (results / NAME / "controls.json").write_text("{}")
    assert unproven_verdict(verdict, results, loaded) == verdict
