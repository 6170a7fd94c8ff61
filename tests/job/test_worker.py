"""The trial worker: settings travel as JSON, bad input is a refusal, an infrastructure
fault an error, and an error's detail comes from the phase that ended in it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.config.settings import Settings
from harness.errors import HarnessError
from harness.job import worker
from harness.job.worker import _phase_error, run, settings_from_json, settings_to_json

pytestmark = pytest.mark.unit


def _spec(tmp_path: Path, scenario: str = "go/none") -> dict[str, Any]:
    settings = Settings(
        project_root=tmp_path,
        workspace=tmp_path / "ws",
        results=tmp_path / "results",
        scenario_root=tmp_path / "scenarios",
        jobs=tmp_path / "jobs",
    )
    trial = {"scenario": scenario, "agent": "nop", "model": "none", "seed": None, "repetition": 0}
    return {
        "settings": settings_to_json(settings),
        "trial": trial,
        "sandbox": "local",
        "job": "j",
        "key": "k",
    }


def test_settings_survive_the_trip_through_json(tmp_path: Path) -> None:
    data = _spec(tmp_path)["settings"]
    assert settings_from_json(json.loads(json.dumps(data))).scenario_root == tmp_path / "scenarios"


def test_an_unknown_scenario_is_refused_with_its_one_line(tmp_path: Path) -> None:
    out = run(_spec(tmp_path))
    assert out["status"] == "refused" and out["outcome"] is None
    assert "no scenario named 'go/none'" in out["detail"] and "\n" not in out["detail"]


def test_a_harness_fault_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_: object) -> None:
        raise HarnessError("docker went away")

    monkeypatch.setattr(worker, "load_scenario", broken)
    out = run(_spec(tmp_path))
    assert out["status"] == "error" and out["outcome"] == "error"
    assert "docker went away" in out["detail"]


def test_the_detail_of_an_error_is_its_first_failed_phase(tmp_path: Path) -> None:
    phases = [
        {"name": "agent", "outcome": "completed", "detail": "fine"},
        {"name": "verify", "outcome": "error", "detail": "no space left"},
        {"name": "report", "outcome": "error", "detail": "later"},
    ]
    (tmp_path / "progress.json").write_text(json.dumps({"phases": phases}))
    assert _phase_error(tmp_path) == "no space left"
    (tmp_path / "progress.json").write_text("{}")
    assert _phase_error(tmp_path) == "" and _phase_error(tmp_path / "none") == ""
