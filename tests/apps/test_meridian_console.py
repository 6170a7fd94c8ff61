"""apps/meridian-console: the two-service flagship (ledgerd + notifierd, console, WebGL field).

Unit tests (fast) pin the vendor's frozen structure and moving positions, the SPEC's size
and ids, the suite's shape (tiers, criticals, weight asserts) and the static coverage
(every MUST has a check and a defect violating exactly it). The browser tests execute
trees for real (vendor mock, relays, four SIGKILLs, chromium with software WebGL), about
2-4 minutes a tree: every run scores the reference and one defect that stops at boot
here, LOW and a critical defect in ``test_meridian_console_low.py`` (another worker); two
more defects when ``HARNESS_TEST_MERIDIAN_CONSOLE=1``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import warnings
from collections import Counter
from functools import cache
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

from harness.appkit.browser import CHROMIUM
from harness.scoring import Scorer
from harness.scoring.must import spec_ids
from harness.trial.slot_log import take_slot
from tests.support.suites import app_suite, suite_names

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "scenarios" / "apps" / "meridian-console"
SEED = "0123456789abcdef"


def _suite() -> ModuleType:
    return app_suite("meridian-console")


@cache
def _names() -> SimpleNamespace:
    """Every name of the suite package's modules (the checks, the vendor's fixtures, ...)."""
    return suite_names("meridian-console")


@pytest.mark.unit
def test_vendor_structure_is_frozen() -> None:
    v = _names()
    ds = v.build_dataset(SEED)
    assert len(ds.payments) == 192 * 64 == len({p.id for p in ds.payments})
    assert len(ds.cursors) == 192 and ds.cursors[0] is None
    assert set(Counter(p.currency for p in ds.payments)) == set(v.EXPONENTS)
    for cur in v.CURRENCIES:  # every exponent above 2**53
        assert sum(p.amount_minor > 2**53 and p.currency == cur for p in ds.payments) == 2
    for cur in ("EUR", "USD", "KWD", "CLF"):  # a negative above minus one unit
        assert any(
            -(10 ** v.EXPONENTS[cur]) < p.amount_minor < 0 and p.currency == cur
            for p in ds.payments
        )
    days = sorted({p.day for p in ds.payments})
    assert len(days) == 64 and days[0] == "2026-03-01" and days[-1] == "2026-05-03"
    assert sum(p.day != p.created_at[:10] for p in ds.payments) > 500
    assert sum(p.counterparty in v.MARKUP_NAMES for p in ds.payments) == len(v.MARKUP_NAMES)
    # ties on created_at, a dozen of them within one currency: ordering by created_at
    # alone shows in the plain listing and in a filtered one (M-API-4, M-API-5)
    stamps = Counter(p.created_at for p in ds.payments)
    assert sum(n - 1 for n in stamps.values() if n > 1) >= 90
    clf = Counter(p.created_at for p in ds.payments if p.currency == "CLF")
    assert sum(n > 1 for n in clf.values()) >= 12
    kinds = Counter(e.kind for e in ds.events)
    assert kinds == {
        "early": 6,
        "reordered": 8,
        "late": 6,
        "replay": 2,
        "forged": 2,
        "stale": 1,
        "future": 1,
        "edge": 1,
    }
    f = ds.faults
    pages = [f.drop_page, f.rate_page, f.error_page, f.slow_page, f.outage_page, *f.resync_pages]
    assert len(set(pages)) == len(pages) and f.kill_page < min(pages)
    for e in ds.events:  # an early event comes before its payment's page
        page = next(i // 64 for i, p in enumerate(ds.payments) if p.id == e.payment_id)
        assert (e.slot < page) == (e.kind == "early")


@pytest.mark.unit
def test_positions_move_with_the_seed_and_replay_exactly() -> None:
    v = _names()
    a, b, again = v.build_dataset(SEED), v.build_dataset("fedcba9876543210"), v.build_dataset(SEED)
    assert [p.as_json() for p in a.payments] == [p.as_json() for p in again.payments]
    assert a.faults == again.faults and a.events == again.events
    assert {p.id for p in a.payments}.isdisjoint({p.id for p in b.payments})
    assert a.faults != b.faults and a.tokens != b.tokens


@pytest.mark.unit
def test_spec_is_long_and_every_id_is_verified_and_violated() -> None:
    text = (SCENARIO / "SPEC.md").read_text()
    # the copy the scorer container gets (it stages suite/ only) is the same SPEC
    assert (SCENARIO / "suite" / "SPEC.md").read_text() == text
    assert len(text.split()) >= 7000
    ids = spec_ids(SCENARIO / "SPEC.md")
    assert len(ids) >= 50
    suite = _suite().suite
    checked = {m for c in suite.checks for m in c.musts}
    assert checked == set(ids)
    import yaml

    exact: Counter[str] = Counter()
    for meta in (SCENARIO / "defects").glob("*.yml"):
        data = yaml.safe_load(meta.read_text())
        assert data["breaks"] and data["harm"] and meta.with_suffix(".patch").is_file()
        if len(data.get("violates") or []) == 1:
            exact[data["violates"][0]] += 1
    assert set(exact) == set(ids)


@pytest.mark.unit
def test_suite_shape_tiers_criticals_and_weight_asserts() -> None:
    m = _names()
    checks = m.suite.checks
    weighted = [c for c in checks if c.tier not in ("diagnostic", "excellence")]
    assert len(weighted) >= 80 and sum(c.critical for c in checks) >= 10
    assert sum(c.tier == "diagnostic" for c in checks) == 2
    t = m.TIERS
    assert t["transactions"] + t["consistency"] + t["resilience"] >= 0.46 and m.EXCELLENCE >= 0.1
    assert len(m.GATES) == 16
    assert all(m.suite.get(r) for r in set(m.ROOT_BLOCKS.values()))


# -- integration: the real run -----------------------------------------------------------
#
# Every CI run scores the reference (the whole script: four SIGKILLs, two partitions, six
# journeys; 1-2 minutes on two shared cores) and one defect that ends the run at boot
# (seconds), so the flagship cannot rot unseen; LOW and a critical defect run beside them
# (test_meridian_console_low.py). Two more defects are scored only with
# HARNESS_TEST_MERIDIAN_CONSOLE=1. The full controls and the calibration are documented in
# the scenario's README.

_needs_chromium = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium")
#: The defect every CI run scores: ledgerd walks before it serves, so it is never healthy
#: within the 10 s budget (the critical root ``app.boots``; the run stops there).
CI_DEFECT = ("walk-before-serve", "M-BOOT-1", "app.boots")


_scorers: dict[str, Scorer] = {}


def _score(tmp: Path, patch: Path | list[Path] | None, name: str) -> Any:
    """Score the reference with ``patch`` (or several, applied in turn) on ``SEED``."""
    m = _suite()
    scorer = _scorers.setdefault("suite", Scorer(m.suite))  # one selftest (~18 s) per module
    tree = tmp / name
    shutil.copytree(SCENARIO / "solution", tree)
    patches = [patch] if isinstance(patch, Path) else list(patch or [])
    if patches:
        subprocess.run(["git", "init", "-q"], cwd=tree, check=True)
    for one in patches:
        subprocess.run(["git", "apply", str(one)], cwd=tree, check=True)
    # one executed app at a time, as trials score (the machine-wide slot): the timing
    # checks must not grade another scoring's CPU, least of all for the app at the bounds
    with take_slot(True), m.context(tree, SEED, tmp / f"ev-{name}") as ev:
        return scorer.score(ev)


def _why(score: Any) -> str:
    """The unmet MUSTs with what their failing checks saw (a CI failure explains itself)."""
    rows = [
        f"{r.check} {r.score} ({r.status}): {r.detail}"
        for r in score.rows
        if set(r.musts) & set(score.unmet) and r.score < 1.0
    ]
    return f"unmet {score.unmet}, fired {score.fired}; " + " | ".join(rows)


#: The MUSTs a console error leaves unmet (``journey.load`` and the ``fe.*`` checks rooted
#: in it). Once, in one CI run, the reference failed on them alone; 26 scorings here
#: (quiet, at load 4-17, two side by side) did not repeat it, and that run printed no
#: detail. A right app failing on them alone is scored once more, and what the browser
#: logged the first time becomes a warning in the test report; any other unmet MUST, a
#: fired critical, or the same failure twice fails the test.
CONSOLE_ONLY = frozenset({"M-UI-1", "M-FE-1"})


def _score_right(tmp: Path, patch: Path | list[Path] | None, name: str) -> Any:
    """Score an app that must meet the SPEC (see ``CONSOLE_ONLY``)."""
    got = _score(tmp / "first", patch, name)
    if got.spec_met or got.fired or not got.unmet or not set(got.unmet) <= CONSOLE_ONLY:
        return got
    warnings.warn(f"{name} scored again after a console-only failure: {_why(got)}", stacklevel=2)
    return _score(tmp / "again", patch, name)


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return _score_right(tmp_path_factory.mktemp("meridian-console"), None, "reference")


@pytest.mark.integration
@pytest.mark.browser
@_needs_chromium
def test_reference_meets_the_spec_and_one_defect_fails(reference: Any, tmp_path: Path) -> None:
    assert reference.spec_met and not reference.unmet and not reference.fired, _why(reference)
    assert reference.measurable and reference.final >= 0.9
    name, must, critical = CI_DEFECT
    got = _score(tmp_path, SCENARIO / "defects" / f"{name}.patch", name)
    assert not got.spec_met and must in got.unmet and critical in got.fired, (name, got.unmet)
    assert got.final == 0.0  # a dead service: the floor of the "dead" class


@pytest.mark.integration
@pytest.mark.browser
@_needs_chromium
@pytest.mark.skipif(
    os.environ.get("HARNESS_TEST_MERIDIAN_CONSOLE") != "1",
    reason="set HARNESS_TEST_MERIDIAN_CONSOLE=1 (2-3 minutes more)",
)
def test_two_more_defects_fail(reference: Any, tmp_path: Path) -> None:
    for defect, must in (
        ("instances-capped", "M-GL-1"),
        ("first-backoff-150ms", "M-SYNC-3"),
    ):
        got = _score(tmp_path, SCENARIO / "defects" / f"{defect}.patch", defect)
        assert not got.spec_met and must in got.unmet, (defect, got.unmet)
        assert got.final < reference.final
