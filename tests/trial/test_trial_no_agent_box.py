"""An agent that declares ``needs_sandbox = False`` (the oracle) gets no agent container:
the trial starts only the sandboxes it uses, and its result files are the same."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli import app
from harness.sandbox.local import LocalSandbox
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.integration  # two local trials (~25 s each under load)


def _exec(agent: str, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], dict]:
    started: list[str] = []
    real = LocalSandbox.start

    def start(self: LocalSandbox) -> None:
        started.append(self.spec.phase)
        real(self)

    monkeypatch.setattr(LocalSandbox, "start", start)
    env = {
        "HARNESS_WORKSPACE": str(tmp / "ws"),
        "HARNESS_RESULTS": str(tmp / "res"),
        "HARNESS_SCENARIO_ROOT": str(REPO_ROOT / "scenarios"),
        "HARNESS_SKIP_REMOTE": "1",
    }
    args = ["exec", "--agent", agent, "--sandbox", "local", "py/ledger-rounding"]
    out = CliRunner().invoke(app, args, env=env)
    assert out.exit_code in (0, 1), out.output
    (run,) = (tmp / "res" / "py" / "ledger-rounding").iterdir()
    return started, json.loads((run / "verify" / "report.json").read_text())


def test_the_oracle_runs_without_an_agent_sandbox_and_nop_with_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started, report = _exec("oracle", tmp_path / "o", monkeypatch)
    assert "agent" not in started and report["outcome"] == "success"
    started, report = _exec("nop", tmp_path / "n", monkeypatch)
    assert "agent" in started and report["outcome"] != "success"
