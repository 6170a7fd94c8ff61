"""apps/invoice-sync 4.x: wrong apps that each break one MUST only outside the old
script's positions fail, and a right app exactly at every bound passes.

The variants (``tests/data/invoice-sync-variants/*.patch``, each applied on the
reference) are the issue's wrong apps that 3.1.1 scored 1.000: a status word wrong only
mid-sync, the status kept in memory (after a restart a finished sync says "syncing"), a
page's invoices and its cursor in two transactions (a SIGKILL between them loses a
page), each limit one step past the SPEC's bound (Retry-After honoured only up to 5 s, a
backoff capped at 2 s, a linear backoff, giving up after five 503s, a 5.8 s timeout),
the cursor in a JSON file beside the database, an auto-refresh that throws every 5 s,
``INSERT OR REPLACE`` moving a repeated invoice. ``bounds-exact`` meets every bound
exactly (first pause 0.2 s, 1.5x, cap 5 s, Retry-After waited exactly, a 6.0 s timeout).

Each tree is executed for real (mock upstream, SIGKILLs, chromium), about a minute a tree:
CI scores a sample (``SAMPLE``).
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

VARIANTS = Path(__file__).resolve().parents[1] / "data" / "invoice-sync-variants"

#: each wrong variant and the MUST it breaks (the one it must be failed for)
WRONG = {
    "status-running-mid-sync": "M-STATUS-1",
    "status-in-memory": "M-STATUS-1",
    "retry-after-up-to-5": "M-SYNC-5",
    "backoff-cap-2": "M-SYNC-4",
    "linear-backoff": "M-SYNC-4",
    "gives-up-after-5": "M-SYNC-2",
    "timeout-5.8": "M-SYNC-6",
    "cursor-in-json": "M-DATA-1",
    "console-refresh-typeerror": "M-UI-5",
    "insert-or-replace": "M-API-1",
}


# CI scores a sample (the backoff's growth, the status across a restart, the app at every
# bound); HARNESS_TEST_INVOICE_REDTEAM=all scores every variant
SAMPLE = {"linear-backoff", "status-in-memory", "bounds-exact"}


@pytest.fixture(scope="module")
def scorer(tmp_path_factory: pytest.TempPathFactory) -> tuple[ModuleType, Path]:
    return app_suite("invoice-sync"), tmp_path_factory.mktemp("invoice-sync-variants")


def _score(scorer: tuple[ModuleType, Path], name: str) -> Score:
    sampled(name, SAMPLE)
    module, tmp = scorer
    tree = patched_reference("invoice-sync", tmp / name, VARIANTS / f"{name}.patch")
    return score_tree(module, "invoice-sync", tree, tmp / f"evidence-{name}")


#: shipped, but not scored here: the write kill lands between its two commits only when
#: the grader's watcher wins a race with the app's next commit (milliseconds); at CI's load
#: it loses about half the time (seen: the variant scored 1.000). The check's logic on a kill
#: between two writes is proved on hand-built evidence (test_invoice_sync_observation.py);
#: closing the race is invoice-sync 4.1.0's work.
RACING = {"split-transaction"}


def test_every_variant_is_named_here() -> None:
    shipped = {p.stem for p in VARIANTS.glob("*.patch")}
    assert shipped == {*WRONG, *RACING, "bounds-exact"}
    assert shipped >= SAMPLE


@pytest.mark.parametrize("name", sorted(WRONG))
def test_a_wrong_app_outside_the_old_script_fails(
    scorer: tuple[ModuleType, Path], name: str
) -> None:
    score = _score(scorer, name)
    assert not score.spec_met and WRONG[name] in score.unmet, (score.unmet, what_failed(score))


def test_a_right_app_exactly_at_every_bound_passes(scorer: tuple[ModuleType, Path]) -> None:
    score = _score(scorer, "bounds-exact")
    assert score.spec_met and score.final == 1.0, what_failed(score)
