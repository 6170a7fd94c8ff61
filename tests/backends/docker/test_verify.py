"""The scorer container's spec: the staged folder and the harness source arrive as
read-only mounts inside its root-only /opt/harness, nothing by archive; no network."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.backends.docker.verify import ROOT, STAGE, scorer_policy, verifier_spec
from harness.sandbox.inject import HARNESS_PYTHONPATH, harness_package
from harness.scenario.policy import DEFAULT_POLICY
from harness.verify.request import VerifyRequest


@pytest.mark.unit
def test_the_stage_and_the_harness_source_are_read_only_mounts(tmp_path: Path) -> None:
    request = VerifyRequest(
        scenario="t/calc",
        baseline="0" * 40,
        seed="00000000000a11ce",
        runner="pytest",
        hidden_root=str(tmp_path / "hidden"),
        mounts={"/host/go": "/opt/harness-go"},
    )
    policy = scorer_policy(DEFAULT_POLICY)
    spec = verifier_spec("harness/scorer:x", request, tmp_path / "stage", {"k": "v"}, policy)
    assert spec.mounts == {
        "/host/go": "/opt/harness-go",
        str(harness_package()): f"{HARNESS_PYTHONPATH}/harness:ro",
        str(tmp_path / "stage"): f"{STAGE}:ro",
    }
    assert STAGE.startswith(HARNESS_PYTHONPATH + "/")  # closed to the tests' and apps' users
    assert spec.network == "none" and spec.workspace is None and not spec.mount_workspace
    assert spec.project_dir == f"{ROOT}/tree" and ROOT in spec.scratch
    assert spec.policy.runs_as_root and spec.labels == {"k": "v"}
    assert request.mounts == {"/host/go": "/opt/harness-go"}  # the request is not changed
