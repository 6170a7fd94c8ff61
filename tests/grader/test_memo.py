"""A kept scoring is found again only when nothing it depends on changed."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.grader import memo
from harness.scoring import Suite, compose, graded, mark_vacuous

pytestmark = pytest.mark.unit


def _scenario(root: Path) -> tuple[Path, Path]:
    scenario = root / "scenario"
    (scenario / "defects").mkdir(parents=True)
    (scenario / "suite").mkdir()
    (scenario / "suite" / "checks.py").write_text("CHECKS = 1\n")
    (scenario / "defects" / "slow.patch").write_text("--- a\n+++ b\n")
    (scenario / "defects" / "slow.yml").write_text("breaks: [a]\n")
    tree = root / "tree"
    (tree / ".git").mkdir(parents=True)
    (tree / "app.py").write_text("print(1)\n")
    return scenario, tree


def test_the_key_follows_what_the_scoring_depends_on(tmp_path: Path) -> None:
    scenario, tree = _scenario(tmp_path)

    def key(tag: str = "", seed: str = "s", sandbox: str = "local") -> str:
        return memo.key(scenario, tree, "base", sandbox, seed, tag)

    first = key()
    (tree / ".git" / "index").write_text("git's own state")
    (scenario / "defects" / "slow.yml").write_text("breaks: [a, b]\n")  # declares only
    (scenario / "README.md").write_text("# the controls said TRUSTED\n")  # documents only
    (scenario / "suite" / "calibration.jsonl").write_text("{}\n")  # evidence of scorings
    assert key() == first
    (scenario / "suite" / "README.md").write_text("read by the suite?\n")  # not the root's
    assert key() != first
    (scenario / "suite" / "README.md").unlink()
    assert len({first, key("again"), key(seed="t"), key(sandbox="docker")}) == 4
    (scenario / "suite" / "checks.py").write_text("CHECKS = 2\n")
    assert key() != first
    second = key()
    (tree / "app.py").write_text("print(2)\n")
    assert key() != second
    third = key()
    (scenario / "defects" / "slow.patch").write_text("--- a\n+++ c\n")
    assert key() != third


def test_a_kept_score_reads_back_and_a_broken_one_is_none(tmp_path: Path) -> None:
    suite = Suite(name="app", version="1.0.0", tier_weights={"core": 1.0})
    suite.add("boot", lambda c: graded(1), tier="core", harm="dead app: nothing starts")
    score = compose(mark_vacuous([suite.checks[0].row_of(0.5)]), suite)
    memo.keep(tmp_path, "k1", score)
    assert memo.read(tmp_path, "k1") == score
    (tmp_path / memo.MEMO_DIR / "k2.json").write_text("{not json")
    assert memo.read(tmp_path, "k2") is None
    assert memo.read(tmp_path, "absent") is None
