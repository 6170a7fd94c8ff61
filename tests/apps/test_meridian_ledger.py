"""apps/meridian-ledger: the flagship build-from-spec scenario.

Unit tests (fast) pin the vendor's frozen structure and moving positions, the SPEC's
size and the README's requirement table. The browser tests execute the reference, the
LOW tree and two defects for real (vendor mock, SIGKILLs, chromium), about 30 s a tree;
`harness controls apps/meridian-ledger` scores every tree (see the scenario's README).
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
import yaml

from harness.appkit.browser import CHROMIUM
from harness.scoring.compose import Score
from harness.scoring.verdicts import broken_checks
from tests.support.app_scoring import patched_reference, score_tree, scorer_of
from tests.support.suites import app_suite, suite_names

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "scenarios" / "apps" / "meridian-ledger"
DEFECTS = sorted(p.stem for p in (SCENARIO / "defects").glob("*.yml"))
SEED = "0123456789abcdef"


def _suite() -> ModuleType:
    return app_suite("meridian-ledger")


def _names() -> SimpleNamespace:
    """Every name the suite package's modules define (the vendor's included)."""
    return suite_names("meridian-ledger")


def _declared(defect: str) -> dict[str, Any]:
    return dict(yaml.safe_load((SCENARIO / "defects" / f"{defect}.yml").read_text()))


# -- unit: structure, positions, documents -----------------------------------------------


@pytest.mark.unit
def test_vendor_structure_is_frozen() -> None:
    v = _names()
    ds = v.build_dataset(SEED)
    assert len(ds.payments) == 24 * 64 == len({p.id for p in ds.payments})
    assert len(ds.cursors) == 24 and ds.cursors[0] is None
    assert set(Counter(p.currency for p in ds.payments)) == {"EUR", "USD", "JPY", "KWD"}
    days = sorted({p.day for p in ds.payments})
    assert len(days) == 40 and days[0] == "2026-03-10" and days[-1] == "2026-04-18"
    assert sum(p.amount_minor > 2**53 for p in ds.payments) == 6
    assert sum(p.counterparty in v.MARKUP_NAMES for p in ds.payments) == 4
    # the Berlin day differs from the UTC date and from a fixed UTC+1 for enough payments
    assert sum(p.day != p.created_at[:10] for p in ds.payments) > 50
    assert len({p.created_at for p in ds.payments}) < len(ds.payments)  # shared timestamps
    f = ds.faults
    pages = [f.kill_page, f.drop_page, f.rate_page, f.error_page, f.slow_page]
    pages += [*f.before_pages, *f.after_pages]
    assert len(set(pages)) == len(pages) and f.kill_page < min(pages[1:])
    assert sum(not e.signed for e in ds.events) == 2
    # around the 300 s window, on every seed: one inside, a stale replay, one from the future
    assert sorted(e.offset for e in ds.events if e.offset) == [-310, -290, 310]


@pytest.mark.unit
def test_positions_move_with_the_seed_and_replay_exactly() -> None:
    v = _names()
    a, b, again = (
        v.build_dataset("seed-one"),
        v.build_dataset("seed-two"),
        v.build_dataset("seed-one"),
    )
    assert [p.id for p in a.payments] == [p.id for p in again.payments]
    assert a.faults == again.faults and a.tokens == again.tokens
    assert {p.id for p in a.payments}.isdisjoint({p.id for p in b.payments})
    assert a.tokens != b.tokens


@pytest.mark.unit
def test_ground_truth_follows_the_version_rule() -> None:
    ds = _names().build_dataset(SEED)
    for event in ds.events:
        _status, version = ds.truth[event.payment_id]
        if event.valid:
            assert version >= event.version
        else:  # forged events and events outside the timestamp window never count
            assert version < event.version


@pytest.mark.unit
def test_spec_size_and_readme_maps_every_check() -> None:
    words = len((SCENARIO / "SPEC.md").read_text().split())
    assert 2500 <= words <= 4000, words
    readme = (SCENARIO / "README.md").read_text()
    for check in _suite().suite.checks:
        assert f"`{check.name}`" in readme, check.name
    for defect in DEFECTS:
        assert defect in readme, defect


@pytest.mark.unit
def test_every_must_has_a_check_and_a_defect_violating_it_alone() -> None:
    from harness.scoring.must import spec_ids

    ids = spec_ids(SCENARIO / "SPEC.md")
    assert len(ids) >= 40
    checked = {m for c in _suite().suite.checks for m in c.musts}
    assert checked == set(ids)
    alone = {tuple(_declared(d).get("violates", [])) for d in DEFECTS}
    assert {(m,) for m in ids} <= alone, sorted(set(ids) - {v[0] for v in alone if len(v) == 1})


@pytest.mark.unit
def test_faults_sit_at_the_specs_bounds() -> None:
    v = _names()
    spec = (SCENARIO / "SPEC.md").read_text()
    assert "at least 5 seconds" in spec and v.SLOW_DELAY < 5.0 and v.SLOW_DELAY > 4.5
    assert "at least 6 attempts" in spec and v.ERROR_REPEATS == 5  # the sixth succeeds
    assert v.RETRY_AFTER > 1


@pytest.mark.unit
def test_twelve_or_more_defects_declared_with_their_criticals() -> None:
    suite = _suite().suite
    critical = {c.name for c in suite.checks if c.critical}
    names = {c.name for c in suite.checks}
    assert len(DEFECTS) >= 12
    for d in DEFECTS:
        meta = _declared(d)
        assert set(meta["breaks"]) <= names and meta["harm"], d
        assert bool(set(meta["breaks"]) & critical) == bool(meta.get("critical")), d
    weights = suite.tier_weights
    assert weights["wire"] + weights["consistency"] + weights["resilience"] >= 0.45
    assert all(suite.floor(suite.get(c).severity) == 0.6 for c in critical - {"app.boots"})


# -- browser: the reference, LOW and two defects, executed -------------------------------


def _tree(tmp: Path, name: str, patch: Path | None = None) -> Path:
    return patched_reference("meridian-ledger", tmp / name, patch)


class Scored:
    def __init__(self, tmp: Path) -> None:
        self.module = _suite()
        self.scorer = scorer_of(self.module)
        self.tmp = tmp
        self.reference = self.score(_tree(tmp, "reference"), "reference")
        self.low = self.score(_tree(tmp, "low", SCENARIO / "low.patch"), "low")
        self.defects = {
            name: self.score(_tree(tmp, name, SCENARIO / "defects" / f"{name}.patch"), name)
            for name in ("new-key-per-attempt", "no-etag")
        }

    def score(self, tree: Path, name: str) -> Score:
        return score_tree(self.module, "meridian-ledger", tree, self.tmp / f"evidence-{name}", SEED)

    @property
    def bar(self) -> float:
        thresholds = self.scorer.thresholds()
        assert thresholds is not None
        return thresholds.bar


browser = [
    pytest.mark.integration,
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium"),
]

# the module's fixture scores several trees, each waiting its turn for the machine's
# app-scoring slot behind other workers' scorings: 900 s is one scoring's allowance
pytestmark = pytest.mark.timeout(2700)


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> Scored:
    if not CHROMIUM.exists():
        pytest.skip("needs Debian's chromium")
    return Scored(tmp_path_factory.mktemp("meridian"))


@pytest.mark.integration
@pytest.mark.browser
def test_reference_scores_high_and_succeeds(scored: Scored) -> None:
    score = scored.reference
    bad = {r.check: r.detail for r in score.rows if r.score < 1.0 and r.tier != "excellence"}
    assert score.spec_met is True and not score.unmet and not score.fired, bad
    assert not score.unavailable and not bad, bad
    assert score.excellence is not None and score.excellence < 1.0  # not saturated
    timing = next(r.detail for r in score.rows if r.check == "run.timing")
    assert float(re.search(r"execution ([\d.]+) s", timing).group(1)) < 240  # type: ignore[union-attr]


@pytest.mark.integration
@pytest.mark.browser
def test_low_tree_boots_but_scores_at_most_five_percent(scored: Scored) -> None:
    score = scored.low
    assert next(r for r in score.rows if r.check == "app.boots").score == 1.0
    assert score.final <= 0.05 and score.spec_met is False


@pytest.mark.integration
@pytest.mark.browser
@pytest.mark.parametrize("defect", ["new-key-per-attempt", "no-etag"])
def test_defects_break_only_their_checks_and_fail(scored: Scored, defect: str) -> None:
    score = scored.defects[defect]
    epsilon = scored.scorer.thresholds().epsilon  # type: ignore[union-attr]
    broken = set(broken_checks(scored.reference, score, epsilon))
    assert broken == set(_declared(defect)["breaks"])
    assert score.spec_met is False and set(_declared(defect)["violates"]) <= set(score.unmet)
    if _declared(defect).get("critical"):
        assert any(f.factor < 1.0 for f in score.factors)  # a critical multiplied it down


# -- the health watch: a /health that waits on the held page during boot ---------------

_STUB = """
import http.server, json, sys, threading, urllib.request

port, vendor, key, blocking = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4] == "1"
lock = threading.Lock()


def walk() -> None:
    cursor = None
    with lock:  # the vendor client's lock, held for the whole walk
        while True:
            url = vendor + "/v1/payments" + (f"?cursor={cursor}" if cursor else "")
            req = urllib.request.Request(url, headers={"Authorization": f"Bearer {key}"})
            with urllib.request.urlopen(req, timeout=30) as resp:
                cursor = json.load(resp)["next_cursor"]
            if not cursor:
                return


class Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if blocking:
            with lock:
                pass
        body = b'{"status": "ok"}'
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Health)
threading.Thread(target=walk, daemon=True).start()
server.serve_forever()
"""


@pytest.mark.integration
@pytest.mark.parametrize("blocking", [True, False])
def test_health_watch_sees_a_boot_poll_waiting_on_the_held_page(
    tmp_path: Path, blocking: bool
) -> None:
    """The sync reaches the held page before /health first answers: a /health that
    waits on the vendor client then answers only once the hold ends, after the suite's
    boot poll, so the mid-sync ask alone reads 200. The watch asks during the hold."""
    from harness.appkit.procs import AppProcess

    suite = _names()
    stub = tmp_path / "stub.py"
    stub.write_text(_STUB)
    with suite.Vendor(SEED, tmp_path / "trace.jsonl", hold_max=4.0) as vendor:
        key = vendor.dataset.tokens["vendor_api_key"]
        argv = [sys.executable, str(stub), "{port}", vendor.url, key, "1" if blocking else "0"]
        with AppProcess(argv, cwd=tmp_path, logs=tmp_path / "logs", budget=15.0) as app:
            with suite.HealthWatch(vendor, app, 15.0) as watch:
                app.start()
                assert vendor.kill_point.wait(15.0)
                stalls = watch.stop()
                assert suite.get(app.url("/health"), timeout=3.0).status == 200
            vendor.release()
    if blocking:
        assert stalls and "no answer in 3 s" in stalls[0], stalls
        assert vendor.held_until is not None  # the hold had ended by the mid-sync ask
    else:
        assert stalls == []


@pytest.mark.unit
def test_a_restart_continues_from_the_held_page_or_after_a_missed_hold() -> None:
    from types import SimpleNamespace

    suite = _names()
    faults = SimpleNamespace(kill_page=4)
    records = [{"kind": "page", "phase": "initial-sync", "page": p} for p in range(7)]
    vendor = SimpleNamespace(
        dataset=SimpleNamespace(faults=faults), held_until=None, records=lambda: records
    )
    assert suite._resume_from(vendor) == (4,)  # killed while the page was held
    vendor.held_until = 12.5  # the hold ended before the kill: at page 6 or after it
    assert suite._resume_from(vendor) == (6, 7)
    records[:] = [{"kind": "page", "phase": "initial-sync", "page": p} for p in range(24)]
    assert suite._resume_from(vendor) == (23,)


@pytest.mark.unit
@pytest.mark.parametrize("held", [True, False])
def test_a_boot_ask_that_hangs_in_the_page_hold_is_asked_again(
    monkeypatch: pytest.MonkeyPatch, held: bool
) -> None:
    """boot.health grades M-RUN-1; a /health that hangs while the vendor holds a page is
    M-HEALTH-1's finding. An ask with no answer during the hold is marked for asking
    again after the respawn; one with no answer and no hold stays a boot failure."""
    import socket
    import threading
    from types import SimpleNamespace

    monkeypatch.setattr(_suite().health, "HEALTH_PROMPT_S", 0.3)  # where first_health reads it
    suite = _names()
    with socket.socket() as silent:  # accepts, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        app = SimpleNamespace(url=lambda path: f"http://127.0.0.1:{port}{path}")
        vendor = SimpleNamespace(kill_point=threading.Event())
        if held:
            vendor.kill_point.set()
        got, again = suite.first_health(app, vendor)
    assert got.status is None
    assert again is held
    ev = suite.Evidence(dataset=None, evidence_dir=Path("."))
    ev.first_health, ev.first_health_after_hold = got, False
    assert suite.boot_health(ev).score == 0.0
    ev.first_health = suite.Fetched(got.url, 200, '{"status": "ok"}')
    ev.first_health_after_hold = True  # the ask after the respawn answered
    out = suite.boot_health(ev)
    assert out.score == 1.0 and "asked again after the respawn" in out.detail
