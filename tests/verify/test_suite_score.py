"""A scenario's own suite run by the verifier (``scoring_bridge.suite_score``): an app
that answers with something that is not HTTP fails its checks; the harness is not
charged with it."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from harness.verify.request import VerifyRequest
from harness.verify.scoring_bridge import suite_score

pytestmark = pytest.mark.unit

SUITE = """\
from __future__ import annotations

import contextlib
import http.client
from pathlib import Path

from harness.scoring import Suite, graded

HERE = Path(__file__).resolve().parent
suite = Suite(name="broken-http", version="1.0.0", tier_weights={"core": 1.0},
              thresholds=HERE / "thresholds.yml")


@suite.check("answers", tier="core", harm="no answer")
def answers(ctx: object) -> object:
    return graded(1.0)


@suite.check("health", tier="core", harm="no health")
def health(ctx: object) -> object:
    return graded(1.0)


@contextlib.contextmanager
def context(tree, seed, evidence):
    raise http.client.BadStatusLine('{"status": "ok"}')  # what the app sent back
    yield None
"""


def test_an_app_that_breaks_http_fails_every_check(tmp_path: Path) -> None:
    suite_dir = tmp_path / "suite"
    suite_dir.mkdir()
    (suite_dir / "suite.py").write_text(textwrap.dedent(SUITE))
    (suite_dir / "thresholds.yml").write_text("calibrated: false\nhigh: 0.9\nlow: 0.1\n")
    tree = tmp_path / "tree"
    tree.mkdir()
    request = VerifyRequest(
        scenario="apps/broken-http",
        baseline="0" * 40,
        seed="s",
        runner="local",
        hidden_root=str(tmp_path / "hidden"),
        suite_dir=str(suite_dir),
        evidence_dir=str(tmp_path / "evidence"),
    )
    score, _ = suite_score(request, tree)
    assert score.final == 0.0
    assert {r.status.value for r in score.rows} == {"absent"}
    assert all("the app broke HTTP (BadStatusLine" in r.detail for r in score.rows)
