"""apps/invoice-sync 4.2: the fourth red team's apps, scored for real against this era.

A red team that read only the SPEC, ``scenario.yml`` and the reference wrote 21 wrong
apps and 8 right ones against 4.1.0 (``tests/data/invoice-sync-redteam4``: each a patch on
the reference, ``TABLE.md`` the verdicts 4.1.0 gave: 16 wrong apps succeeded, 2 right
ones failed). 4.2.0 closes their classes (the scenario's README): each is applied on the
reference here and executed (mock upstream, SIGKILLs, chromium, about a minute a tree;
CI scores a sample):
every wrong one must fail with the MUST it breaks unmet, every right one must succeed.
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

REDTEAM = Path(__file__).resolve().parents[1] / "data" / "invoice-sync-redteam4"

#: the wrong apps 4.1.0 let succeed, and the MUST each must now be failed for
WRONG = {
    # 4.1.0 let these succeed
    "w-ra-from-send": "M-SYNC-5",
    "w-timeout-after-503": "M-SYNC-6",
    "w-id-nocase": "M-SYNC-1",
    "w-clen-chars-html": "M-UI-2",
    "w-js-refresh-float": "M-MONEY-1",
    "w-noscroll": "M-UI-3",
    "w-empty-page-end": "M-SYNC-1",
    "w-overlap-on-timeout": "M-SYNC-8",
    "w-backoff-from-send": "M-SYNC-3",
    "w-charset-latin1": "M-API-1",
    "w-two-tables": "M-UI-2",
    "w-nfc": "M-API-1",
    "w-bind-all": "M-RUN-1",
    "w-startup-renumber": "M-DUR-2",
    "w-urljoin-drops-base": "M-SYNC-1",
    # 4.1.0 caught these: they stay caught
    "w-order-last-seen": "M-API-1",
    "w-entity-passthru": "M-UI-4",
    "w-seq-per-run": "M-API-1",
    "w-resume-refetch": "M-DUR-1",
    "w-restart-wait": "M-DUR-2",
}
#: wrong apps whose class this era leaves open (the README says why): strict xfail
KNOWN_GAP = {"w-giveup-30s": "M-SYNC-2"}  # a 503 run under 30 s: a longer one costs 30 s
RIGHT = sorted(p.stem for p in REDTEAM.glob("r-*.patch"))
#: wrong apps written while 4.2.0 closed those classes (members nobody listed)
INVENTED_DIR = REDTEAM.parent / "invoice-sync-invented"
INVENTED = {
    "i-id-lower": "M-SYNC-1",
    "i-nfkc": "M-API-1",
    "i-bmp-only": "M-API-1",
    "i-clen-api-chars": "M-API-1",
    "i-stop-no-new": "M-SYNC-1",
    "i-backoff-send-1.6x": "M-SYNC-3",
    "i-ra-from-prev-start": "M-SYNC-5",
    "i-hedge-8s": "M-SYNC-8",
    "i-urljoin-relative": "M-SYNC-1",
    "i-div-hidden": "M-UI-3",
    "i-fixed-footer": "M-UI-3",
    "i-flash-rounded": "M-MONEY-1",
    "i-refresh-blink": "M-MONEY-1",
    "i-bind-dualstack": "M-RUN-1",
    "i-bind-empty-host": "M-RUN-1",
    "i-startup-rebuild": "M-DUR-2",
    "i-startup-clear-done": "M-STATUS-1",
}
# 46 executed apps are most of an hour of the machine's one scoring slot: CI scores a
# sample (a start-up kill, a name's normal form, scrolling to every row, a right app that
# 4.1.0 failed); HARNESS_TEST_INVOICE_REDTEAM=all scores every one.
SAMPLE = {"w-startup-renumber", "w-nfc", "w-noscroll", "r-nowrap"}


@pytest.fixture(scope="module")
def scorer(tmp_path_factory: pytest.TempPathFactory) -> tuple[ModuleType, Path]:
    return app_suite("invoice-sync"), tmp_path_factory.mktemp("invoice-sync-redteam4")


def _patch(name: str) -> Path:
    return (INVENTED_DIR if name.startswith("i-") else REDTEAM) / f"{name}.patch"


def _score(scorer: tuple[ModuleType, Path], name: str) -> Score:
    module, tmp = scorer
    tree = patched_reference("invoice-sync", tmp / name, _patch(name))
    return score_tree(module, "invoice-sync", tree, tmp / f"evidence-{name}")


def _gaps() -> set[str]:
    """The apps TABLE.md marks as 4.1.0's gaps (a wrong app that passed, a right one that
    failed), without the reference replaying its own seeds."""
    gaps = set()
    for line in (REDTEAM / "TABLE.md").read_text().splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 7 and "GAP" in cells[7] and not cells[1].startswith("ref-"):
            gaps.add(cells[1])
    return gaps


def test_every_gap_app_is_named_here() -> None:
    named = {*WRONG, *KNOWN_GAP, *RIGHT}
    assert _gaps() - {"w-clen-chars-html-2"} <= named
    assert len(RIGHT) == 8
    assert {*WRONG, *RIGHT} >= SAMPLE
    assert all((REDTEAM / f"{n}.patch").is_file() for n in named)


def test_every_app_still_applies_to_the_reference(tmp_path: Path) -> None:
    """A patch that no longer applies (the reference changed) scores nothing."""
    assert sorted(p.stem for p in INVENTED_DIR.glob("*.patch")) == sorted(INVENTED)
    for name in [*WRONG, *KNOWN_GAP, *RIGHT, *INVENTED]:
        patched_reference("invoice-sync", tmp_path / name, _patch(name))


@pytest.mark.parametrize("name", sorted(INVENTED))
def test_an_invented_wrong_app_fails_for_its_must(
    scorer: tuple[ModuleType, Path], name: str
) -> None:
    sampled(name, SAMPLE)
    score = _score(scorer, name)
    assert not score.spec_met and INVENTED[name] in score.unmet, (score.unmet, what_failed(score))


@pytest.mark.parametrize("name", sorted(WRONG))
def test_a_wrong_app_of_the_red_team_fails_for_its_must(
    scorer: tuple[ModuleType, Path], name: str
) -> None:
    sampled(name, SAMPLE)
    score = _score(scorer, name)
    assert not score.spec_met and WRONG[name] in score.unmet, (score.unmet, what_failed(score))


@pytest.mark.xfail(strict=True, reason="gives up on 503s only after 30 s")
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
