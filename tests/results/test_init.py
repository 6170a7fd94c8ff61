"""run.json as a typed model: round trip, fields other modules add, and the one writer."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.results import RunDir, RunMeta

pytestmark = pytest.mark.unit

BASE = {
    "run_id": "r1",
    "scenario": "t/calc",
    "seed": "00c0ffee00c0ffee",
    "commit": "abc",
    "baseline": "def",
    "harness_version": "0.1.0",
    "agent": "oracle",
    "agent_version": "1.0",
    "model": "none",
}


def test_round_trip_keeps_unknown_fields(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path, "t/calc", "r1")
    meta = RunMeta.model_validate({**BASE, "toolchain": {"go": "1.22"}})
    meta.images["agent"] = "sha256:1"
    run.write_run(meta)
    back = run.read_run()
    assert back == meta
    data = back.as_json()
    assert data["toolchain"] == {"go": "1.22"} and "fleet" not in data
    assert data["host"]["python"] and data["started_at"]


def test_only_the_trial_writes_run_json() -> None:
    root = Path(__file__).resolve().parents[2] / "harness"
    writers = [
        p.relative_to(root).as_posix()
        for p in root.rglob("*.py")
        if re.search(r"\.write_run\(", p.read_text())
    ]
    assert writers == ["trial/trial.py"]
