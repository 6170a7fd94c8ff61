"""apps/invoice-sync proves its grader: HIGH, LOW, ISOLATION and DETERMINISM.

The suite executes each tree for real (mock upstream, SIGKILL + respawn, chromium), so
the trees are scored once per module and the tests read the scores.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from harness.scenario import load_scenario
from harness.scoring import Scorer, run_checks
from harness.scoring.appkit.browser import CHROMIUM
from harness.scoring.compose import Score
from harness.scoring.controls import DefectOutcome, broken_checks, evaluate_controls

pytestmark = [
    pytest.mark.integration,
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium"),
]

ROOT = Path(__file__).resolve().parents[1]
LOADED = load_scenario("apps/invoice-sync", ROOT / "scenarios")
SCENARIO = LOADED.directory
DEFECTS = sorted(p.stem for p in (SCENARIO / "defects").glob("*.yml"))


def _suite_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "invoice_sync_suite_test", SCENARIO / "suite" / "suite.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)


def _skeleton(dest: Path) -> Path:
    """The workspace before the agent: the bundle at the scenario's commit."""
    _git("clone", "-q", str(SCENARIO / LOADED.scenario.repo), str(dest), cwd=dest.parent)
    _git("checkout", "-q", LOADED.scenario.commit, cwd=dest)
    return dest


def _solution(dest: Path, defect: str | None = None) -> Path:
    shutil.copytree(SCENARIO / "solution", dest)
    if defect:
        _git("apply", str(SCENARIO / "defects" / f"{defect}.patch"), cwd=dest)
    return dest


class Scored:
    """Scores of every tree, computed once."""

    def __init__(self, tmp: Path) -> None:
        self.module = _suite_module()
        self.scorer = Scorer(self.module.suite)
        self.seed = LOADED.seed
        self.tmp = tmp
        self.solution = self.score(_solution(tmp / "solution"), "solution")
        self.solution_again = self.score(tmp / "solution", "solution-again")
        self.skeleton = self.score(_skeleton(tmp / "skeleton"), "skeleton")
        self.defects = {d: self.score(_solution(tmp / f"tree-{d}", d), d) for d in DEFECTS}

    def score(self, tree: Path, name: str) -> Score:
        with self.module.context(tree, self.seed, self.tmp / f"evidence-{name}") as ctx:
            rows = run_checks(self.module.suite, ctx)
        return self.scorer.score_rows(rows)


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> Scored:
    return Scored(tmp_path_factory.mktemp("invoice-sync"))


def _declared(defect: str) -> dict[str, Any]:
    return dict(yaml.safe_load((SCENARIO / "defects" / f"{defect}.yml").read_text()))


def test_reference_solution_scores_high(scored: Scored) -> None:
    score = scored.solution
    bad = {r.check: r.detail for r in score.rows if r.score < 1.0}
    assert score.final >= 0.9 and not score.unavailable, bad
    assert (scored.tmp / "evidence-solution" / "invoices.png").stat().st_size > 0


def test_empty_skeleton_scores_low_with_one_root_block(scored: Scored) -> None:
    score = scored.skeleton
    assert score.final <= 0.2
    assert [b.root for b in score.blocks] == ["app.health"]
    assert len(score.blocks[0].downstream) == len(score.rows) - 1


def test_scoring_the_same_tree_twice_gives_the_same_vector(scored: Scored) -> None:
    assert scored.solution.vector() == scored.solution_again.vector()


def test_six_or_more_defects_with_a_critical_one() -> None:
    suite = _suite_module().suite
    critical = {c.name for c in suite.checks if c.critical}
    assert len(DEFECTS) >= 6
    assert any(set(_declared(d)["breaks"]) & critical for d in DEFECTS)


@pytest.mark.parametrize("defect", DEFECTS)
def test_each_defect_breaks_exactly_its_declared_checks(scored: Scored, defect: str) -> None:
    declared = set(_declared(defect)["breaks"])
    score = scored.defects[defect]
    broken = set(broken_checks(scored.solution, score, 0.01))
    downstream = {n for d in declared for n in scored.module.suite.downstream(d)}
    assert declared <= broken, {r.check: r.detail for r in score.rows}
    assert broken - declared <= downstream, {
        r.check: r.detail for r in score.rows if r.check in broken - declared
    }


def test_a_critical_defect_costs_more_than_any_cosmetic_one(scored: Scored) -> None:
    money = scored.defects["fixed-exponent"].final
    cosmetic = [scored.defects[d].final for d in ("hidden-rows", "console-error")]
    assert money < min(cosmetic)


def test_the_controls_trust_the_grader(scored: Scored) -> None:
    thresholds = scored.scorer.thresholds()
    assert thresholds is not None and not thresholds.calibrated
    isolation = [
        DefectOutcome(name=d, declared=list(_declared(d)["breaks"]), score=s)
        for d, s in scored.defects.items()
    ]
    report = evaluate_controls(
        scored.solution,
        scored.skeleton,
        isolation,
        (scored.solution.vector(), scored.solution_again.vector()),
        thresholds,
    )
    assert report.trusted, report.text()
