"""A proof for one environment does not erase the other: ``harness controls`` on local,
then on Docker, leaves controls.json with both proofs (each with its environment), and a
trial verified in either environment reads its own: GRADER TRUSTED in both. A proof of
older scenario content is dropped, and a file written before proofs were kept counts as
its own environment's proof."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from harness.config.settings import Settings
from harness.grader.controls import grader_verdict, run_controls
from harness.scenario.load import load_scenario
from harness.verify import proof as proof_env
from tests.conftest import REPO_ROOT

NAME = "smoke/py-fast"


def _settings(tmp_path: Path) -> Settings:
    root = tmp_path / "scenarios"
    shutil.copytree(REPO_ROOT / "scenarios" / NAME, root / NAME)
    for name in ("agents.yml", "llms.yml"):
        shutil.copy(REPO_ROOT / name, tmp_path / name)
    return dataclasses.replace(
        Settings.from_env(tmp_path),
        scenario_root=root,
        results=tmp_path / "results",
        workspace=tmp_path / "workspace",
        project_root=tmp_path,
    )


@pytest.mark.docker
@pytest.mark.integration
def test_controls_on_local_then_docker_keep_both_proofs(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    loaded = load_scenario(NAME, settings.scenario_root)
    assert run_controls(loaded, settings, "local").trusted
    assert run_controls(loaded, settings, "docker").trusted
    saved = json.loads((settings.results / NAME / "controls.json").read_text())
    assert saved["sandbox"] == "docker"  # the top level is the latest proof, as before
    assert sorted(saved["proofs"]) == ["docker", "local"]
    for kind, proof in saved["proofs"].items():
        env = proof["environment"]
        assert env["sandbox"] == kind and proof["verdict"] == "GRADER TRUSTED"
        assert grader_verdict(settings.results, NAME, loaded.sha256, env) == "GRADER TRUSTED"


@pytest.mark.unit
def test_write_proof_keeps_each_environment_of_the_same_content(tmp_path: Path) -> None:
    path = tmp_path / "controls.json"
    local = {"sandbox": "local", "scenario_sha": "s1", "verdict": "GRADER TRUSTED",
             "environment": {"sandbox": "local", "toolchain": {"python": "3.11"}}}  # fmt: skip
    docker = {"sandbox": "docker", "scenario_sha": "s1", "verdict": "GRADER TRUSTED",
              "environment": {"sandbox": "docker", "verify_image": "sha256:aa"}}  # fmt: skip
    path.write_text(json.dumps(local))  # written before proofs were kept
    proof_env.write_proof(path, docker)
    data = json.loads(path.read_text())
    assert data["sandbox"] == "docker" and sorted(data["proofs"]) == ["docker", "local"]
    assert proof_env.proof_for(data, local["environment"])["sandbox"] == "local"
    assert proof_env.proof_for(data, None)["sandbox"] == "docker"
    changed = {**local, "scenario_sha": "s2"}
    proof_env.write_proof(path, changed)  # new content: the old proofs say nothing of it
    assert sorted(json.loads(path.read_text())["proofs"]) == ["local"]
