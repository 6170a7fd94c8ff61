"""apps/invoice-sync 3.x: the reference and right apps written differently (a client-rendered
page with indented markup and pretty JSON; another threading and storage design) meet
every MUST; the LOW tree and a critical defect fail; the shipped defects are declared.

The suite executes each tree for real (mock upstream, SIGKILL + respawn, chromium), about
28 s a tree, so only seven trees are scored here; `harness controls apps/invoice-sync`
scores all of them (the full controls are run by the test in test_controls.py when
HARNESS_TEST_APP_CONTROLS=1).
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from harness.appkit.browser import CHROMIUM
from harness.scenario.load import load_scenario
from harness.scoring.compose import Score
from harness.scoring.verdicts import broken_checks
from tests.support.app_scoring import patched_reference, score_tree, what_failed
from tests.support.suites import app_suite

pytestmark = [
    pytest.mark.integration,
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium"),
    # the module's fixture scores seven trees (LOW ~1.5 min), each waiting its turn for
    # the machine's app-scoring slot behind other workers' scorings (one rehearsal: 1,120 s)
    pytest.mark.timeout(2700),
]

ROOT = Path(__file__).resolve().parents[2]
LOADED = load_scenario("apps/invoice-sync", ROOT / "scenarios")
SCENARIO = LOADED.directory
DEFECTS = sorted(p.stem for p in (SCENARIO / "defects").glob("*.yml"))
RIGHT = Path(__file__).resolve().parents[1] / "data" / "invoice-sync-right"


def _suite_module() -> ModuleType:
    return app_suite("invoice-sync")


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)


def _skeleton(dest: Path) -> Path:
    """The workspace before the agent: the bundle at the scenario's commit."""
    _git("clone", "-q", str(SCENARIO / LOADED.scenario.repo), str(dest), cwd=dest.parent)
    _git("checkout", "-q", LOADED.scenario.commit, cwd=dest)
    return dest


def _solution(dest: Path, patch: Path | None = None) -> Path:
    return patched_reference("invoice-sync", dest, patch)


class Scored:
    """Scores of the trees these tests read, computed once."""

    def __init__(self, tmp: Path) -> None:
        self.module = _suite_module()
        self.tmp = tmp
        self.solution = self.score(_solution(tmp / "solution"), "solution")
        self.low = self.score(_solution(tmp / "low", SCENARIO / "low.patch"), "low")
        self.skeleton = self.score(_skeleton(tmp / "skeleton"), "skeleton")
        self.float_money = self.score(
            _solution(tmp / "float", SCENARIO / "defects" / "float-money.patch"), "float"
        )
        self.health_waits = self.score(
            _solution(tmp / "health", SCENARIO / "defects" / "health-waits-on-upstream.patch"),
            "health",
        )
        self.right = {
            name: self.score(_solution(tmp / name, RIGHT / f"{name}.patch"), name)
            for name in ("client-rendered", "threads-storage")
        }

    def score(self, tree: Path, name: str) -> Score:
        return score_tree(self.module, "invoice-sync", tree, self.tmp / f"evidence-{name}")


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> Scored:
    return Scored(tmp_path_factory.mktemp("invoice-sync"))


def _declared(defect: str) -> dict[str, Any]:
    return dict(yaml.safe_load((SCENARIO / "defects" / f"{defect}.yml").read_text()))


def test_reference_solution_passes_every_check(scored: Scored) -> None:
    score = scored.solution
    bad = what_failed(score)
    assert score.spec_met and score.final == 1.0 and not score.unavailable, bad
    assert (scored.tmp / "evidence-solution" / "invoices.png").stat().st_size > 0
    assert score.era.startswith("invoice-sync@4.")


@pytest.mark.parametrize("name", ["client-rendered", "threads-storage"])
def test_right_apps_written_differently_meet_every_must(scored: Scored, name: str) -> None:
    score = scored.right[name]
    assert score.spec_met, (score.unmet, what_failed(score))


def test_low_tree_boots_but_scores_low_and_fails(scored: Scored) -> None:
    score = scored.low
    health = next(r for r in score.rows if r.check == "app.health")
    assert health.score == 1.0  # it runs and serves ...
    assert score.final <= 0.2 and score.spec_met is False  # ... but does the job wrong
    complete = next(r for r in score.rows if r.check == "sync.complete")
    # it never syncs: after a whole sync budget of silence the later waits end at once
    assert "the sync stalled (first life: no upstream request in" in complete.detail


def test_empty_skeleton_scores_low_with_one_root_block(scored: Scored) -> None:
    score = scored.skeleton
    assert score.final <= 0.2
    assert [b.root for b in score.blocks] == ["app.health"]
    measured = [r for r in score.rows if r.tier != "diagnostic"]  # confinement, timing
    assert len(score.blocks[0].downstream) == len(measured) - 1


def test_float_money_breaks_only_money_and_fails(scored: Scored) -> None:
    score = scored.float_money
    broken = set(broken_checks(scored.solution, score, 0.01))
    # 4.2: the page is also watched throughout, which sees the same wrong amounts
    both = {"money.exact", "money.exact_throughout"}
    assert broken == set(_declared("float-money")["breaks"]) == both
    assert score.unmet == ["M-MONEY-1"] and set(score.fired) == both
    assert not score.spec_met


def test_health_waiting_on_the_upstream_fails_for_its_must(scored: Scored) -> None:
    # its /health hangs while a page is awaited: M-HEALTH-2 is unmet. On 3.x that was all;
    # on 4.x a restart meets the 6 s Retry-After and the 503 run, during which such a
    # /health can hang past the 10 s boot budget: the restart then fails, and the MUSTs
    # after it with it (the verdict is the same: failed, M-HEALTH-2 among the unmet)
    score = scored.health_waits
    bad = what_failed(score)
    assert not score.spec_met and "M-HEALTH-2" in score.unmet, bad
    assert "health.during_sync" in bad, bad


def test_ten_or_more_realistic_defects_and_critical_ones_are_declared() -> None:
    suite = _suite_module().suite
    critical = {c.name for c in suite.checks if c.critical}
    names = {c.name for c in suite.checks}
    ids = suite.spec_ids()
    assert len(DEFECTS) >= 10 and len(ids) >= 20
    for d in DEFECTS:
        meta = _declared(d)
        assert set(meta["breaks"]) <= names and meta["harm"]
        assert meta["violates"] and set(meta["violates"]) <= set(ids), d
        if set(meta["breaks"]) & critical:
            assert meta.get("critical") is True, d
