"""A score as text and JSON: each step of the arithmetic named so a reader can redo it,
every row below 1.0 with its harm, and the JSON the same score."""

from __future__ import annotations

import pytest

from harness.scoring import Score, Suite, compose, graded, mark_vacuous
from harness.scoring.text import render_json, render_text

pytestmark = pytest.mark.unit


def _score(**scores: float) -> Score:
    suite = Suite(name="app", version="1.0.0", tier_weights={"core": 0.7, "ui": 0.3})
    ok = lambda c: graded(1)  # noqa: E731
    suite.add("boot", ok, tier="core", harm="dead app")
    suite.add("total", ok, harm="wrong money", critical=True, severity="money")
    suite.add("layout", ok, tier="ui", harm="misaligned")
    rows = [chk.row_of(scores.get(chk.name, 1.0)) for chk in suite.checks]
    return compose(mark_vacuous(rows), suite)


def test_the_arithmetic_is_spelled_out_step_by_step() -> None:
    score = _score(layout=0.5, total=0.8)
    text = render_text(score)
    lines = text.splitlines()
    assert lines[0].startswith("suite app   era ")
    assert [ln.split()[0] for ln in lines[1:5]] == ["inner", "gate", "excellence", "base"]
    assert any(ln.startswith("critical    ") and "total [money]" in ln for ln in lines)
    final = next(ln for ln in lines if ln.startswith("final"))
    assert final.startswith(f"final       {score.final:.4f}   = {score.base:.4f} x ")
    assert "below 1.0:" in lines
    assert "  0.5000 [ok] layout <ui>: misaligned" in lines
    assert text.endswith("\n")


def test_a_perfect_score_lists_nothing_below_and_json_is_the_same_score() -> None:
    score = _score()
    assert "below 1.0:" not in render_text(score)
    doc = render_json(score)
    assert doc["final"] == score.final and len(doc["rows"]) == 3
    assert Score.model_validate(doc).final == score.final
