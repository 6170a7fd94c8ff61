"""A real agent's run a newcomer can see without a model host: mini-swe-agent replays the
shipped cassettes on a non-smoke Python and a non-smoke Go scenario (in Docker), and the
Python run shows up in ``harness report``, on the board's run page with its conversation,
and in ``harness view RUN``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO_ROOT

pytestmark = [pytest.mark.integration, pytest.mark.docker]
CASSETTES = REPO_ROOT / "tests" / "cassettes"


@pytest.mark.parametrize(
    ("scenario", "cassette"),
    [
        ("py/ledger-rounding", "mini-ledger-rounding-solve.jsonl"),
        ("go/wordfreq", "mini-wordfreq-solve.jsonl"),
    ],
)
def test_mini_replays_a_real_scenario_to_success(
    scenario: str, cassette: str, project: Path, cli: Any
) -> None:
    shutil.copytree(REPO_ROOT / "scenarios" / scenario, project / "scenarios" / scenario)
    done = cli(
        "exec", "--agent", "mini-swe-agent", "--model", "replay",
        "--replay", str(CASSETTES / cassette), scenario,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    (report,) = list((project / "results").rglob("verify/report.json"))
    assert json.loads(report.read_text())["outcome"] == "success"
    run = report.parents[1]
    steps = (run / "gateway" / "transcript.jsonl").read_text().splitlines()
    assert len(steps) == 3  # read, fix and test, submit
    if scenario.startswith("go/"):
        return
    table = cli("report", "--format", "csv")
    assert table.returncode == 0 and "mini-swe-agent" in table.stdout, table.stderr
    assert cli("board", "--out", str(project / "board")).returncode == 0
    page = (project / "board" / "runs" / f"{run.name}.html").read_text()
    assert 'class="step"' in page and "git apply" in page
    view = cli("view", run.name)
    assert view.returncode == 0 and "-- call 3" in view.stdout
