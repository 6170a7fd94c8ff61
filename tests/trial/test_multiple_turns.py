"""goagentbench's allow-multiple-turns-on-failed-verify: the agent is told what failed and
continues, up to three more turns."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import CLI, make_bundle

pytestmark = pytest.mark.integration

AGENT = """
  - name: second-try
    version: "1.0"
    supports-llms: [none]
    adapter: tests.support.agents:SecondTryAgent
"""


def write(project: Path, tmp_path: Path, allow: bool) -> None:
    folder = project / "scenarios" / "t" / "calc"
    folder.mkdir(parents=True)
    sha = make_bundle(
        tmp_path / "src", folder / "repo.bundle", {"calc.py": "def add(a, b):\n    return a - b\n"}
    )
    (folder / "hidden").mkdir()
    (folder / "hidden" / "test_calc_hidden.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    )
    (folder / "scenario.yml").write_text(
        f"name: calc\nrepo: repo.bundle\ncommit: {sha}\nclassification: {{type: fix-bug}}\n"
        f"agent:\n  instructions: fix add\n  allow-multiple-turns-on-failed-verify: {allow}\n"
        "verify:\n  copy: [{from: hidden/test_calc_hidden.py, to: .}]\n"
        "  tests: [test_calc_hidden.py]\n"
    )
    with (project / "agents.yml").open("a") as fh:
        fh.write(AGENT)


def run_dir(project: Path) -> Path:
    (run,) = list((project / "results" / "t" / "calc").iterdir())
    return run


@pytest.mark.parametrize("allow", [True, False])
def test_continue_after_failed_verify(cli: CLI, project: Path, tmp_path: Path, allow: bool) -> None:
    write(project, tmp_path, allow)
    res = cli(
        "exec",
        "--agent",
        "second-try",
        "--sandbox",
        "local",
        "t/calc",
        env={"PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    run = run_dir(project)
    phases = [p["name"] for p in json.loads((run / "progress.json").read_text())["phases"]]
    report = json.loads((run / "verify" / "report.json").read_text())
    if allow:
        assert res.returncode == 0, res.stdout + res.stderr
        assert phases == ["agent", "verify", "agent", "verify"]
        assert report["turns"] == 2 and report["outcome"] == "success"
        told = (run / "agent" / "turn-2" / "instructions.txt").read_text()
        assert "test_calc_hidden.py" in told and "Please continue" in told
    else:
        assert res.returncode == 1
        assert phases == ["agent", "verify"] and report["turns"] == 1
