"""A grader's proof holds only where it was made: controls.json records the environment,
a report verified elsewhere says NOT PROVEN FOR THIS ENVIRONMENT, and a reference that
cannot run (an import error) is an environment error (exit 3), never a low score."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.config.settings import Settings
from harness.errors import InfraError
from harness.grader.controls import grader_verdict, run_controls
from harness.scenario.load import load_scenario
from harness.verify import proof as proof_env
from tests.conftest import REPO_ROOT

NAME = "smoke/py-fast"
ORACLE_LOCAL = ["--agent", "oracle", "--sandbox", "local"]


def _project(tmp_path: Path) -> tuple[Path, Settings]:
    root = tmp_path / "scenarios"
    shutil.copytree(REPO_ROOT / "scenarios" / NAME, root / NAME)
    for name in ("agents.yml", "llms.yml"):
        shutil.copy(REPO_ROOT / name, tmp_path / name)
    settings = dataclasses.replace(
        Settings.from_env(tmp_path),
        scenario_root=root,
        results=tmp_path / "results",
        workspace=tmp_path / "workspace",
        project_root=tmp_path,
    )
    return root, settings


@pytest.mark.unit
def test_mismatch_names_what_changed() -> None:
    here = {"sandbox": "local", "toolchain": {"python": "3.11.2"}, "dependencies": None}
    assert proof_env.mismatch(dict(here), here) is None
    assert "no environment" in str(proof_env.mismatch(None, here))
    other = {**here, "toolchain": {"python": "3.12.0"}}
    assert "toolchain" in str(proof_env.mismatch(other, here))
    verdict = proof_env.verdict_here({"environment": other}, here)
    assert verdict and verdict.startswith(proof_env.NOT_PROVEN_HERE)
    assert proof_env.verdict_here({"environment": other}, None) is None


@pytest.mark.integration
def test_controls_record_environment_and_reports_check_it(tmp_path: Path) -> None:
    root, settings = _project(tmp_path)
    loaded = load_scenario(NAME, root)
    assert run_controls(loaded, settings, "local").trusted
    saved = json.loads((settings.results / NAME / "controls.json").read_text())
    env = saved["environment"]
    assert env["sandbox"] == "local" and env["toolchain"]["python"]
    assert env["toolchain"]["pytest"]
    assert grader_verdict(settings.results, NAME, loaded.sha256, env) == "GRADER TRUSTED"
    elsewhere = {**env, "sandbox": "docker", "verify_image": "sha256:" + "ab" * 32}
    assert grader_verdict(settings.results, NAME, loaded.sha256, elsewhere).startswith(
        "NOT PROVEN FOR THIS ENVIRONMENT"
    )

    # A trial verified here is GRADER TRUSTED; once the proof was made under another
    # toolchain, the same trial's report says NOT PROVEN FOR THIS ENVIRONMENT.
    cli_env = {
        **os.environ,
        "HARNESS_SCENARIO_ROOT": str(root),
        "HARNESS_RESULTS": str(settings.results),
        "HARNESS_WORKSPACE": str(settings.workspace),
    }

    def oracle() -> dict[str, object]:
        done = subprocess.run(
            [sys.executable, "-m", "harness.cli", "exec", NAME, *ORACLE_LOCAL],
            cwd=tmp_path,
            env=cli_env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        newest = max(settings.results.glob(f"{NAME}/*/verify/report.json"), key=os.path.getmtime)
        return dict(json.loads(newest.read_text()))

    assert oracle()["grader"] == "GRADER TRUSTED"
    saved["environment"]["toolchain"]["python"] = "2.7.18"
    saved["proofs"]["local"]["environment"]["toolchain"]["python"] = "2.7.18"  # local's proof
    (settings.results / NAME / "controls.json").write_text(json.dumps(saved))
    report = oracle()
    assert str(report["grader"]).startswith("NOT PROVEN FOR THIS ENVIRONMENT"), report["grader"]
    assert "2.7.18" in str(report["grader"])


@pytest.mark.integration
def test_reference_import_error_is_an_environment_error(tmp_path: Path) -> None:
    root, settings = _project(tmp_path)
    folder = root / NAME
    patch = (folder / "solution.patch").read_text()
    broken = patch.replace(
        "+    return max(low, min(value, high))",
        "+    import harness_missing_dependency  # noqa\n+    return max(low, min(value, high))",
    ).replace("@@ -3,4 +3,4 @@", "@@ -3,4 +3,5 @@")
    (folder / "solution.patch").write_text(broken)
    loaded = load_scenario(NAME, root)
    with pytest.raises(InfraError) as err:
        run_controls(loaded, settings, "local")
    assert err.value.exit_code == 3
    assert "environment" in str(err.value) and "harness_missing_dependency" in str(err.value)
    saved = json.loads((settings.results / NAME / "controls.json").read_text())
    assert saved["trusted"] is False and "NOT PROVEN" in saved["verdict"]
    assert "NOT PROVEN" in grader_verdict(
        settings.results, NAME, loaded.sha256, saved["environment"]
    )
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", "controls", NAME, "--sandbox", "local"],
        cwd=tmp_path,
        env={
            **os.environ,
            "HARNESS_SCENARIO_ROOT": str(root),
            "HARNESS_RESULTS": str(settings.results),
        },
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 3, done.stdout + done.stderr
    assert "reference solution errors" in done.stderr
