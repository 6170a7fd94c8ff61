"""The board names the grader behind each era: its controls verdict and mutation score."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.report.board.site import build_board
from harness.report.collect import collect
from tests.support.jobs_agents import write_result

pytestmark = pytest.mark.unit


def test_the_overview_shows_each_eras_grader(tmp_path: Path) -> None:
    root, site = tmp_path / "results", tmp_path / "site"
    write_result(root, "py/a", "r-a-01", agent="alpha", score=1.0, era="apps@2.0.0")
    write_result(root, "py/b", "r-b-01", agent="alpha", score=1.0, era="other@1.0.0")
    controls = {
        "era": "apps@2.0.0",
        "verdict": "GRADER NOT TRUSTED",
        "sandbox": "docker",
        "mutation": {"score": 0.9, "judged": 120, "killed": 108, "survived": ["x"] * 12},
    }
    (root / "py/a" / "controls.json").write_text(json.dumps(controls))
    (root / "py/b" / "controls.json").write_text(json.dumps({**controls, "era": "stale@0"}))
    page = build_board(collect(root), site).read_text()
    assert "py/a: GRADER NOT TRUSTED (docker); mutation score 0.900 on 120 mutants" in page
    assert "(12 survived)" in page
    assert "py/b:" not in page  # a proof of another era proves nothing here
