"""apps/invoice-sync 4.1: the red team's apps that 4.0.0 judged wrongly, scored for real.

A red team that never read the grader wrote 49 wrong apps and 11 right ones against
4.0.0 (``tests/data/invoice-sync-redteam3``: each a ``diff.patch`` on the reference,
its ``NOTE.md`` and the verdict 4.0.0 gave); 20 wrong apps succeeded. Each is applied on
the reference here and executed (mock upstream, SIGKILLs, chromium, about a minute a tree;
CI scores a sample):
every wrong one must fail with the MUST it breaks unmet, every right one must succeed.

Not here: ``w38-journal-memory`` (journal_mode=MEMORY, synchronous=OFF: a SIGKILL between
two writes of a commit tears the file; on seed 0123456789abcdef the write kill did, the
restart read "database disk image is malformed", but on a11ce5eedf00d123 the same app
scored 1.000: caught by chance, not closed) and ``w39-no-store-lock`` (one connection
shared by threads without a lock: Python's sqlite3 serialises calls on it, so no answer
breaks; the red team doubts it too).
``w22-done-flag-separate-tx`` breaks the SPEC (a SIGKILL between the last page's commit
and the done flag's makes the restart walk every page again) but the one write kill
lands inside a page's first transaction: a known gap, strict xfail.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from harness.scoring.compose import Score
from tests.support.app_scoring import (
    APP_SCORING_MARKS,
    OUTSIDE_SAMPLE,
    SCORE_ALL,
    patched_reference,
    sampled,
    score_tree,
    what_failed,
)
from tests.support.suites import app_suite

pytestmark = APP_SCORING_MARKS

REDTEAM = Path(__file__).resolve().parents[1] / "data" / "invoice-sync-redteam3"

#: the wrong apps 4.0.0 let succeed, and the MUST each must now be failed for
WRONG = {
    "w01-retry-after-first-only": "M-SYNC-5",
    "w04-cap-4s": "M-SYNC-4",
    "w12-ui-ellipsis": "M-UI-3",
    "w14-ui-cap-500": "M-UI-2",
    "w16-single-threaded-server": "M-HEALTH-2",
    "w20-ui-empty-while-syncing": "M-UI-2",
    "w23-give-up-on-conn-error": "M-SYNC-1",
    "w28-ui-fixed-layout-clip": "M-UI-3",
    "w29-customer-stripped": "M-API-1",
    "w30-data-mkdir-not-recursive": "M-DATA-1",
    "w31-cursor-not-encoded": "M-SYNC-1",
    "w34-hedge-after-6.5s": "M-SYNC-8",
    "w36-money-zero-bare": "M-MONEY-1",
    "w40-done-flag-in-tmp": "M-DATA-1",
    "w42-customer-truncated-200": "M-API-1",
    "w44-cap-3s": "M-SYNC-4",
    "w47-cap-2.5s": "M-SYNC-4",
}
KNOWN_GAP = {"w22-done-flag-separate-tx": "M-DUR-3"}
NOT_OBSERVABLE = {"w38-journal-memory", "w39-no-store-lock"}
RIGHT = sorted(p.name for p in REDTEAM.glob("r*") if (p / "diff.patch").is_file())
# 29 executed apps at about a minute each are half an hour of the machine's one scoring
# slot: CI scores a sample (Retry-After honoured in every run, an app with another
# storage mode); HARNESS_TEST_INVOICE_REDTEAM=all scores every one.
SAMPLE = {"w01-retry-after-first-only", "r07-wal-normal"}


@pytest.fixture(scope="module")
def scorer(tmp_path_factory: pytest.TempPathFactory) -> tuple[ModuleType, Path]:
    return app_suite("invoice-sync"), tmp_path_factory.mktemp("invoice-sync-redteam")


def _score(scorer: tuple[ModuleType, Path], name: str) -> Score:
    module, tmp = scorer
    patch = REDTEAM / name / "diff.patch"
    # the wrong apps' patches name absolute paths (/work/rt3/<app>/invoicesync/...), the
    # right apps' relative ones (../ref/invoicesync/... -> invoicesync/...)
    command = (
        ("patch", "-p0", "-s", "-f", "--no-backup-if-mismatch", "-i")
        if name.startswith("r")
        else ("git", "apply", "-p4")
    )
    tree = patched_reference("invoice-sync", tmp / name, patch, command)
    return score_tree(module, "invoice-sync", tree, tmp / f"evidence-{name}")


def test_every_gap_app_is_named_here() -> None:
    gaps = set()
    for line in (REDTEAM / "TABLE.md").read_text().splitlines():
        if "GAP (wrong app passes)" in line:
            gaps.add(line.split("|")[1].strip())
    assert gaps == {*WRONG, *KNOWN_GAP, *NOT_OBSERVABLE}
    assert len(RIGHT) == 11
    assert {*WRONG, *RIGHT} >= SAMPLE


@pytest.mark.parametrize("name", sorted(WRONG))
def test_a_wrong_app_of_the_red_team_fails_for_its_must(
    scorer: tuple[ModuleType, Path], name: str
) -> None:
    sampled(name, SAMPLE)
    score = _score(scorer, name)
    assert not score.spec_met and WRONG[name] in score.unmet, (score.unmet, what_failed(score))


@pytest.mark.xfail(strict=True, reason="a kill between the last page and its done flag")
@pytest.mark.parametrize("name", sorted(KNOWN_GAP))
def test_a_known_gap_still_succeeds(scorer: tuple[ModuleType, Path], name: str) -> None:
    if not SCORE_ALL:  # strict xfail: a skip inside it would read as an unexpected pass
        pytest.xfail(OUTSIDE_SAMPLE)
    score = _score(scorer, name)
    assert not score.spec_met and KNOWN_GAP[name] in score.unmet, score.unmet


@pytest.mark.parametrize("name", RIGHT)
def test_a_right_app_of_the_red_team_passes(scorer: tuple[ModuleType, Path], name: str) -> None:
    sampled(name, SAMPLE)
    score = _score(scorer, name)
    assert score.spec_met and score.final == 1.0, what_failed(score)
