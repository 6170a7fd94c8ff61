"""apps/invoice-sync 4.2: the fifth red team's apps, scored for real against this era.

A red team that read only the SPEC, ``scenario.yml`` and the reference wrote 28 wrong
apps and 6 right ones against 4.2.0-rc (``tests/data/invoice-sync-redteam5``: each a
patch on the reference, ``NOTES.md`` what each does and why a grader might miss it).
Three wrong apps succeeded there, each one member of a class the run judged only in some
windows: /health saying "degraded" during a run of 503s (its body was read only while a
page was held), a console error only while the table is empty (the page was read from
mid-sync on), the first page fetched before the server starts (every start was judged
only once it answered). The era now asks /health beside every status sample in every
life (``health.throughout``), holds every start's first page ask until the app has
answered /health (``health.before_sync``) and loads the page once while the first start's
table is still empty. Every wrong app must fail with the MUST it breaks unmet, every right
one must succeed; CI scores a sample (``SAMPLE``).
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

REDTEAM = Path(__file__).resolve().parents[1] / "data" / "invoice-sync-redteam5"

#: each wrong app and the MUST it must be failed for
WRONG = {
    "w-retry-first-0.15": "M-SYNC-3",
    "w-backoff-x1.4": "M-SYNC-4",
    "w-retry-after-capped": "M-SYNC-5",
    "w-503-give-up": "M-SYNC-2",
    "w-timeout-5": "M-SYNC-6",
    "w-hedged-request": "M-SYNC-8",
    "w-dedupe-in-memory": "M-SYNC-7",
    "w-empty-page-ends": "M-SYNC-1",
    "w-cursor-first": "M-SYNC-1",
    "w-resume-refetch-last": "M-DUR-1",
    "w-done-resyncs": "M-DUR-3",
    "w-lock-across-fetch": "M-DUR-2",
    "w-first-page-before-serve": "M-HEALTH-2",
    "w-health-degraded": "M-HEALTH-1",
    "w-status-count-received": "M-STATUS-1",
    "w-api-sorted-by-id": "M-API-1",
    "w-api-bigint-string": "M-API-1",
    "w-content-length-chars": "M-UI-2",
    "w-ui-ellipsis-long": "M-UI-3",
    "w-ui-fixed-footer": "M-UI-3",
    "w-escape-unescape-first": "M-UI-4",
    "w-ui-js-empty-error": "M-UI-5",
    "w-ui-no-charset": "M-UI-1",
    "w-money-neg-subunit": "M-MONEY-1",
    "w-money-float-decimals": "M-MONEY-1",
    "w-db-in-cwd": "M-DATA-1",
    "w-done-marker-file": "M-DATA-1",
}
#: wrong apps whose class this era leaves open: strict xfail. A server without
#: SO_REUSEADDR cannot bind its port again right after a SIGKILL (TIME_WAIT); the app
#: kit's respawn then starts it on a fresh port instead of the one it was given, so the
#: restart looks right. Closing it changes the kit (every app's scorer fingerprint).
KNOWN_GAP = {"w-no-reuse-addr": "M-RUN-1"}
RIGHT = sorted(p.stem for p in REDTEAM.glob("r-*.patch"))
# CI scores the three classes this era closed for this red team and a right app whose
# server is its own (asyncio): HARNESS_TEST_INVOICE_REDTEAM=all scores every one
SAMPLE = {
    "w-health-degraded",
    "w-ui-js-empty-error",
    "w-first-page-before-serve",
    "r-asyncio-server",
}


@pytest.fixture(scope="module")
def scorer(tmp_path_factory: pytest.TempPathFactory) -> tuple[ModuleType, Path]:
    return app_suite("invoice-sync"), tmp_path_factory.mktemp("invoice-sync-redteam5")


def _score(scorer: tuple[ModuleType, Path], name: str) -> Score:
    sampled(name, SAMPLE)
    module, tmp = scorer
    tree = patched_reference("invoice-sync", tmp / name, REDTEAM / f"{name}.patch")
    return score_tree(module, "invoice-sync", tree, tmp / f"evidence-{name}")


def test_every_app_is_named_and_applies(tmp_path: Path) -> None:
    shipped = {p.stem for p in REDTEAM.glob("*.patch")}
    assert shipped == {*WRONG, *KNOWN_GAP, *RIGHT} and len(RIGHT) == 6
    assert shipped >= SAMPLE
    for name in sorted(shipped):  # a patch that no longer applies scores nothing
        patched_reference("invoice-sync", tmp_path / name, REDTEAM / f"{name}.patch")


@pytest.mark.parametrize("name", sorted(WRONG))
def test_a_wrong_app_of_the_red_team_fails_for_its_must(
    scorer: tuple[ModuleType, Path], name: str
) -> None:
    score = _score(scorer, name)
    assert not score.spec_met and WRONG[name] in score.unmet, (score.unmet, what_failed(score))


@pytest.mark.xfail(strict=True, reason="the kit's respawn moves a port it cannot rebind")
@pytest.mark.parametrize("name", sorted(KNOWN_GAP))
def test_a_known_gap_still_succeeds(scorer: tuple[ModuleType, Path], name: str) -> None:
    if not SCORE_ALL:  # strict xfail: a skip inside it would read as an unexpected pass
        pytest.xfail(OUTSIDE_SAMPLE)
    score = _score(scorer, name)
    assert not score.spec_met and KNOWN_GAP[name] in score.unmet, score.unmet


@pytest.mark.parametrize("name", RIGHT)
def test_a_right_app_of_the_red_team_passes(scorer: tuple[ModuleType, Path], name: str) -> None:
    score = _score(scorer, name)
    assert score.spec_met and score.final == 1.0, what_failed(score)
