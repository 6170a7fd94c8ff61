"""The test run's schedule: every module that scores executed apps itself is in the chain.

A module that scores apps but is not in ``CHAIN_MODULES`` gets spread over the workers,
each of which then sits blocked on the machine's one app-scoring slot while other tests
queue behind it (one CI run: 6,600 s waited across workers, the run 82 minutes long).
"""

from __future__ import annotations

import re

import pytest

from tests.conftest import CHAIN_MODULES, REPO_ROOT

pytestmark = pytest.mark.unit

#: what a module that executes an app under the slot calls
SCORES = re.compile(r"\bscore_tree\(|\btake_slot\(True\)")
#: these take the slot without executing an app (the lock's own tests, the helper itself)
NOT_SCORING = {
    "tests/trial/test_slot_log.py",
    "tests/support/app_scoring.py",
    "tests/test_conftest.py",
}


def _modules() -> dict[str, str]:
    tests = REPO_ROOT / "tests"
    return {p.relative_to(REPO_ROOT).as_posix(): p.read_text() for p in tests.rglob("*.py")}


def _borrows_scorer(text: str, module: str) -> bool:
    """``text`` imports ``module``'s scoring function (``_score``)."""
    dotted = re.escape(module.removesuffix(".py").replace("/", "."))
    return re.search(rf"from {dotted} import [^\n]*\b_score\b", text) is not None


def test_every_module_that_scores_apps_runs_in_the_chain() -> None:
    modules = _modules()
    scoring = {name for name, text in modules.items() if SCORES.search(text)} - NOT_SCORING
    # a module borrowing a chain module's scorer scores apps too
    scoring |= {n for n, t in modules.items() if any(_borrows_scorer(t, c) for c in CHAIN_MODULES)}
    assert scoring, "no module found scoring apps: the pattern no longer matches"
    assert scoring <= CHAIN_MODULES, sorted(scoring - CHAIN_MODULES)


def test_every_chain_module_exists() -> None:
    assert all((REPO_ROOT / name).is_file() for name in CHAIN_MODULES)


def test_the_patterns_see_a_scoring_module() -> None:
    text = "with take_slot(True), m.context(tree, SEED, ev):\n    pass\n"
    assert SCORES.search(text) and not SCORES.search("take_slot(False)")
    chain = "tests/apps/test_x.py"
    assert _borrows_scorer("from tests.apps.test_x import SEED, _score\n", chain)
    assert not _borrows_scorer("from tests.apps.test_x import SEED, _suite\n", chain)
