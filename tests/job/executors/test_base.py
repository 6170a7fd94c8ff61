"""The local executor: one worker process per trial, its answer read back, a worker that
dies without a word is None, nothing starts once stopped; ``make_executor``'s checks."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from harness.config.settings import Settings
from harness.errors import UserError
from harness.job.executors.base import LocalExecutor, TrialFiles, make_executor
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.unit


def _settings(tmp_path: Path) -> Settings:
    return Settings(
        project_root=tmp_path,
        workspace=tmp_path / "ws",
        results=tmp_path / "results",
        scenario_root=tmp_path / "scenarios",
        jobs=tmp_path / "jobs",
    )


def _spec(tmp_path: Path) -> dict[str, Any]:
    trial = {"scenario": "go/none", "agent": "nop", "model": "none", "seed": None, "repetition": 0}
    return {
        "settings": _settings(tmp_path).as_json(),
        "trial": trial,
        "sandbox": "local",
        "job": "j",
        "key": "k",
        "lock": str(tmp_path / "k.lock"),
        "parent": os.getpid(),
    }


def _files(tmp_path: Path) -> TrialFiles:
    return TrialFiles(tmp_path / "spec.json", tmp_path / "out.json", tmp_path / "logs" / "k.log")


def test_a_trial_runs_in_a_worker_process_and_its_answer_comes_back(tmp_path: Path) -> None:
    out = LocalExecutor(REPO_ROOT).run(_spec(tmp_path), _files(tmp_path))
    assert out is not None and out["status"] == "refused"
    assert "no scenario named 'go/none'" in out["detail"]
    assert (tmp_path / "logs" / "k.log").is_file()


def test_a_worker_that_dies_without_a_word_is_none(tmp_path: Path) -> None:
    files = _files(tmp_path)
    files.out.write_text('{"status": "done"}')  # a previous attempt's answer is not read
    spec = {k: v for k, v in _spec(tmp_path).items() if k != "lock"}
    assert LocalExecutor(REPO_ROOT).run(spec, files) is None
    assert "KeyError" in files.log.read_text()


def test_nothing_starts_once_stopped(tmp_path: Path) -> None:
    executor = LocalExecutor(REPO_ROOT)
    executor.stop()
    assert executor.run(_spec(tmp_path), _files(tmp_path)) is None
    assert not (tmp_path / "k.lock").exists()  # no worker ever took the trial's lock


def test_make_executor_names_and_address(tmp_path: Path) -> None:
    local = make_executor("local", _settings(tmp_path), router_host="10.0.0.1")
    assert local.name == "local" and local.router_host() == "10.0.0.1" and local.slots() is None
    with pytest.raises(UserError, match="--address is for the ray executor") as info:
        make_executor("local", _settings(tmp_path), address="10.0.0.2:6379")
    assert info.value.field == "--address"
    with pytest.raises(UserError, match="unknown executor 'k8s'"):
        make_executor("k8s", _settings(tmp_path))
