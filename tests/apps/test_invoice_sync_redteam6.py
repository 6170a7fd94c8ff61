"""apps/invoice-sync 4.2: the sixth red team's start-ups, scored for real.

A helper that read only the SPEC, ``scenario.yml`` and the reference wrote apps whose
start is dangerous for a moment (a rewrite, a swap, a mark cleared and set again) and two
whose start does much file work safely (``tests/data/invoice-sync-redteam6``). Against the
start-up kills as they were (after the 1st..3rd write and one drawn per quarter), three
wrong apps succeeded: a table swapped in at the end, a rewrite at the end of a long audit,
a done mark cleared for a re-verification. The kills now also fall right before a start's
last three writes, and each restart's status must still read "done": each app is applied
on the reference and executed (about a minute a tree; CI scores a sample).
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from harness.scoring.compose import Score
from tests.support.app_scoring import (
    APP_SCORING_MARKS,
    patched_reference,
    sampled,
    score_tree,
    what_failed,
)
from tests.support.suites import app_suite

pytestmark = APP_SCORING_MARKS

REDTEAM = Path(__file__).resolve().parents[1] / "data" / "invoice-sync-redteam6"

#: each wrong app and the MUST it must be failed for
WRONG = {
    "w-compact-batches": "M-DUR-2",
    "w-copy-drop-rename": "M-DUR-2",
    "w-done-reverify": "M-DUR-3",
    "w-late-rewrite": "M-DUR-2",
    "w-meta-truncate": "M-DATA-1",
    "w-reindex-drop": "M-DUR-2",
    "w-rename-db-aside": "M-DUR-2",
    "w-seq-renumber": "M-DUR-2",
    # the red team's "right" app: side files written atomically, but a start counter and
    # an export in --data are state outside SQLite ("nothing durable may live anywhere else")
    "w-side-files-atomic": "M-DATA-1",
}
RIGHT = sorted(p.stem for p in REDTEAM.glob("r-*.patch"))
# CI scores a table swapped in at a start's end, a done mark cleared while a start
# re-verifies, and a right app that vacuums at every start:
# HARNESS_TEST_INVOICE_REDTEAM=all scores every one
SAMPLE = {"w-late-rewrite", "w-done-reverify", "r-vacuum"}


@pytest.fixture(scope="module")
def scorer(tmp_path_factory: pytest.TempPathFactory) -> tuple[ModuleType, Path]:
    return app_suite("invoice-sync"), tmp_path_factory.mktemp("invoice-sync-redteam6")


def _score(scorer: tuple[ModuleType, Path], name: str) -> Score:
    sampled(name, SAMPLE)
    module, tmp = scorer
    tree = patched_reference("invoice-sync", tmp / name, REDTEAM / f"{name}.patch")
    return score_tree(module, "invoice-sync", tree, tmp / f"evidence-{name}")


def test_every_app_is_named_and_applies(tmp_path: Path) -> None:
    shipped = {p.stem for p in REDTEAM.glob("*.patch")}
    assert shipped == {*WRONG, *RIGHT} and len(RIGHT) == 2
    assert shipped >= SAMPLE
    for name in sorted(shipped):  # a patch that no longer applies scores nothing
        patched_reference("invoice-sync", tmp_path / name, REDTEAM / f"{name}.patch")


@pytest.mark.parametrize("name", sorted(WRONG))
def test_a_wrong_app_of_the_red_team_fails_for_its_must(
    scorer: tuple[ModuleType, Path], name: str
) -> None:
    score = _score(scorer, name)
    assert not score.spec_met and WRONG[name] in score.unmet, (score.unmet, what_failed(score))


@pytest.mark.parametrize("name", RIGHT)
def test_a_right_app_of_the_red_team_passes(scorer: tuple[ModuleType, Path], name: str) -> None:
    score = _score(scorer, name)
    assert score.spec_met and score.final == 1.0, what_failed(score)
