"""Through the CLI: secret seeds differ per trial and replay with --seed, never in the
workspace; a missing browser makes an app trial `error` (exit 3), never a success."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.appkit.browser import CHROMIUM
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.integration


def harness(args: list[str], tmp: Path, **env: str) -> subprocess.CompletedProcess[str]:
    full = {
        **os.environ,
        "HARNESS_WORKSPACE": str(tmp / "ws"),
        "HARNESS_RESULTS": str(tmp / "res"),
        "HARNESS_SCENARIO_ROOT": str(REPO_ROOT / "scenarios"),
        **env,
    }
    full.pop("HARNESS_SEED", None)
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", *args],
        cwd=REPO_ROOT,
        env=full,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _report(tmp: Path, scenario: str) -> dict:
    (run,) = sorted((tmp / "res" / scenario).iterdir())
    report = json.loads((run / "verify" / "report.json").read_text())
    assert json.loads((run / "run.json").read_text())["seed"] == report["seed"]
    return report


def _workspace_bytes(tmp: Path) -> bytes:
    ws = tmp / "ws"
    files = [p for p in ws.rglob("*") if p.is_file() and ".secrets" not in p.parts]
    return b"".join(p.read_bytes() for p in files)


def test_trials_get_different_secret_seeds_and_replay_with_seed(tmp_path: Path) -> None:
    scenario = "smoke/py-fast"
    seeds = []
    for i in range(2):
        out = harness(
            ["exec", "--agent", "oracle", "--sandbox", "local", scenario], tmp_path / f"t{i}"
        )
        assert out.returncode == 0, out.stdout + out.stderr
        report = _report(tmp_path / f"t{i}", scenario)
        seeds.append(report["seed"])
        assert len(report["seed"]) == 16
        # held outside the workspace: nothing the agent can read holds it
        assert report["seed"].encode() not in _workspace_bytes(tmp_path / f"t{i}")
    assert seeds[0] != seeds[1]
    replay = harness(
        ["exec", "--agent", "oracle", "--sandbox", "local", "--seed", seeds[0], scenario],
        tmp_path / "replay",
    )
    assert replay.returncode == 0, replay.stdout + replay.stderr
    assert _report(tmp_path / "replay", scenario)["seed"] == seeds[0]
    assert seeds[0].encode() not in _workspace_bytes(tmp_path / "replay")


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium")
def test_a_missing_browser_makes_the_app_trial_an_error(tmp_path: Path) -> None:
    out = harness(
        ["exec", "--agent", "oracle", "--sandbox", "local", "apps/invoice-sync"],
        tmp_path,
        HARNESS_CHROMIUM=str(tmp_path / "no-chromium"),
        HARNESS_SCORER_LOCK=str(tmp_path / "lock"),
    )
    assert out.returncode == 3, out.stdout + out.stderr
    report = _report(tmp_path, "apps/invoice-sync")
    assert report["outcome"] == "error" and report["success"] is False
    assert "no browser" in json.dumps(report)
    assert "one at a time" in report["scoring_slot"]["policy"]
