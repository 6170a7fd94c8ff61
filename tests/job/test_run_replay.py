"""``harness run --replay CASSETTE``: a job whose every trial's gateway serves the cassette
(no model host), as ``exec --replay`` does for one trial."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import CLI
from tests.gateway.test_trial_gateway import AGENT, LLM, cassette
from tests.support.calc import add_entrants, write_calc

pytestmark = pytest.mark.integration


@pytest.fixture
def calc(project: Path, tmp_path: Path) -> Path:
    folder = write_calc(project, tmp_path / "src", environment=None)
    add_entrants(project, AGENT, LLM)
    return folder


def test_run_replays_a_cassette_for_every_trial(
    project: Path, calc: Path, tmp_path: Path, cli: CLI
) -> None:
    tape = cassette(tmp_path / "fix.jsonl", "sed -i 's/a - b/a + b/' calc.py")
    done = cli(
        "run",
        *("--agents", "toolcall", "--models", "replay-test", "--scenarios", "t/calc"),
        *("--sandbox", "local", "--replay", str(tape)),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (report,) = list((project / "results").rglob("verify/report.json"))
    assert json.loads(report.read_text())["outcome"] == "success"
    missing = cli("run", "--agents", "toolcall", "--scenarios", "t/calc", "--replay", "nope.jsonl")
    assert missing.returncode == 2 and "--replay" in missing.stderr
