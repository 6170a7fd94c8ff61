"""The trial worker: settings travel as JSON, bad input is a refusal, an infrastructure
fault an error, and an error's detail comes from the phase that ended in it. A worker
whose parent is killed stops and removes its trial's scratch folder, and only then."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from harness.config.settings import Settings
from harness.errors import HarnessError
from harness.job import worker
from harness.job.worker import _phase_error, run, settings_from_json, settings_to_json
from tests.conftest import REPO_ROOT

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


# A parent that starts a worker (in a session of its own, as the executors do) whose trial
# runs until killed, waits for the trial to start, then either dies (SIGKILL, as Ray kills
# a task) or waits for the worker to be stopped by SIGTERM.
_PARENT = """
import json, os, signal, subprocess, sys, time
scratch, how = sys.argv[1], sys.argv[2]
spec = {"parent": os.getpid(), "lock": scratch + "/trial.lock", "scratch": scratch}
open(scratch + "/spec.json", "w").write(json.dumps(spec))
child = (
    "import sys, time\\n"
    "from harness.job import worker\\n"
    "def run(spec):\\n"
    "    open(spec['scratch'] + '/started', 'w').close()\\n"
    "    time.sleep(120)\\n"
    "worker.run = run\\n"
    "sys.exit(worker.main(sys.argv[1:]))\\n"
)
proc = subprocess.Popen(
    [sys.executable, "-c", child, scratch + "/spec.json", scratch + "/out.json"],
    start_new_session=True,
)
print(proc.pid, flush=True)
while not os.path.exists(scratch + "/started"):
    time.sleep(0.05)
if how == "die":
    os.kill(os.getpid(), signal.SIGKILL)
proc.terminate()
proc.wait()
"""


def _orphan(tmp_path: Path, how: str) -> tuple[Path, int]:
    scratch = tmp_path / "harness-trial-x"
    scratch.mkdir()
    parent = subprocess.run(
        [sys.executable, "-c", _PARENT, str(scratch), how],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    return scratch, int(parent.stdout.split()[0])


def _gone(pid: int, within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                if fh.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.1)
    return False


def test_a_worker_whose_parent_is_killed_removes_its_scratch(tmp_path: Path) -> None:
    scratch, pid = _orphan(tmp_path, "die")
    assert _gone(pid, 15), "the orphaned worker did not stop"
    assert not scratch.exists()


def test_a_worker_stopped_by_its_parent_leaves_the_scratch_to_it(tmp_path: Path) -> None:
    scratch, pid = _orphan(tmp_path, "term")
    assert _gone(pid, 15)
    assert (scratch / "started").is_file()  # the parent (the Ray task) removes it
