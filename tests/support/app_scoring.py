"""Executed-app scorings for the tests: a shipped app's reference with a patch applied,
scored as a trial scores it, and the fixed sample of the app collections CI scores.

A scoring runs the app for real (mock upstream, SIGKILLs, chromium: about a minute for
invoice-sync) inside the machine's one app-scoring slot, so the test modules that score
sit in ``tests/conftest.py``'s ``CHAIN_MODULES`` (one worker runs them in a row; the
others run everything else) and keep their collections to a sample:
``HARNESS_TEST_INVOICE_REDTEAM=all`` scores every app of every collection.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

import pytest

from harness.appkit.browser import CHROMIUM
from harness.appkit.jail import protecting
from harness.scoring import Scorer, run_checks
from harness.scoring.compose import Score
from harness.trial.slot_log import take_slot

APPS = Path(__file__).resolve().parents[2] / "scenarios" / "apps"
SEED = "0123456789abcdef"
#: every app of every collection, not CI's sample
SCORE_ALL = os.environ.get("HARNESS_TEST_INVOICE_REDTEAM") == "all"
OUTSIDE_SAMPLE = "outside CI's sample (HARNESS_TEST_INVOICE_REDTEAM=all scores it)"
#: the marks of a module that scores executed apps (real processes and chromium)
APP_SCORING_MARKS = [
    pytest.mark.integration,
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium"),
]


def sampled(name: str, sample: set[str]) -> None:
    """Skip ``name`` unless it is in CI's ``sample`` or every app is asked for."""
    if not SCORE_ALL and name not in sample:
        pytest.skip(OUTSIDE_SAMPLE)


def patched_reference(
    app: str, dest: Path, patch: Path | None = None, command: Sequence[str] = ("git", "apply")
) -> Path:
    """A copy of ``app``'s reference at ``dest`` with ``patch`` applied by ``command``."""
    shutil.copytree(APPS / app / "solution", dest)
    if patch is not None:
        subprocess.run([*command, str(patch)], cwd=dest, check=True, capture_output=True)
    return dest


def score_tree(module: ModuleType, app: str, tree: Path, evidence: Path, seed: str = SEED) -> Score:
    """Execute ``tree`` under ``app``'s suite ``module`` and score it: one executed app at
    a time, as trials score (the machine-wide slot), the scenario out of the app's reach."""
    with (
        take_slot(True),
        protecting([APPS / app, evidence]),
        module.context(tree, seed, evidence) as ctx,
    ):
        rows = run_checks(module.suite, ctx)
    return scorer_of(module).score_rows(rows)


_SCORERS: dict[int, Scorer] = {}


def scorer_of(module: ModuleType) -> Scorer:
    """One ``Scorer`` per suite and process (its selftest runs once)."""
    return _SCORERS.setdefault(id(module.suite), Scorer(module.suite))


def what_failed(score: Score) -> dict[str, str]:
    """Each measured check below 1.0 with its detail (an assertion's message)."""
    return {r.check: r.detail for r in score.rows if r.score < 1.0 and r.tier != "diagnostic"}
