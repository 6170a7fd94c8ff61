"""``harness run --replay CASSETTE``: a job whose every trial's gateway serves the cassette
(no model host), as ``exec --replay`` does for one trial."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import CLI, make_bundle
from tests.gateway.test_trial_gateway import AGENT, FILES, HIDDEN, LLM, cassette

pytestmark = pytest.mark.integration


@pytest.fixture
def calc(project: Path, tmp_path: Path) -> Path:
    folder = project / "scenarios" / "t" / "calc"
    folder.mkdir(parents=True)
    sha = make_bundle(tmp_path / "src", folder / "repo.bundle", FILES)
    (folder / "hidden").mkdir()
    (folder / "hidden" / "test_hidden_calc.py").write_text(HIDDEN)
    (folder / "scenario.yml").write_text(
        f"name: calc\nrepo: repo.bundle\ncommit: {sha}\nclassification: {{type: fix-bug}}\n"
        "agent: {instructions: please fix add in calc.py}\n"
        "verify:\n  must-modify: calc.py\n"
        "  copy: [{from: hidden/test_hidden_calc.py, to: .}]\n  tests: [test_hidden_calc.py]\n"
    )
    with (project / "agents.yml").open("a") as fh:
        fh.write(AGENT)
    with (project / "llms.yml").open("a") as fh:
        fh.write(LLM)
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
