"""Run one trial in its own process: ``python -m harness.job.worker SPEC OUT``.

A process per trial lets the job stop a trial cleanly (SIGTERM unwinds every
``finally``, removing containers) and keeps trials from sharing process state. The
worker holds its trial's lock while alive and exits if its job process disappears, so
a SIGKILLed job leaves no trial running behind the next resume's back. An orphaned
worker also removes its trial's scratch folder (``spec["scratch"]``, set by the Ray task,
whose own cleanup dies with it when Ray kills it), so a killed task leaves nothing on its
node.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from harness.config.budget import Budget
from harness.config.entrants import Registry
from harness.config.settings import Settings
from harness.errors import HarnessError, UserError
from harness.scenario.load import load_scenario
from harness.trial.commands import execute
from harness.trial.entrant import RunOptions
from harness.util.fs import read_json, write_json


def settings_to_json(settings: Settings) -> dict[str, Any]:
    return settings.as_json()


def settings_from_json(data: dict[str, Any]) -> Settings:
    return Settings.from_json(data)


def _terminate(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)


def _watch_parent(parent: int, orphaned: threading.Event) -> None:
    """Stop this worker (as if by SIGTERM) once the job process that started it is gone."""
    while os.getppid() == parent:
        time.sleep(0.5)
    orphaned.set()
    os.kill(os.getpid(), signal.SIGTERM)


def run(spec: dict[str, Any]) -> dict[str, Any]:
    """Execute the trial described by ``spec``; returns what the job records."""
    settings = settings_from_json(spec["settings"])
    trial = spec["trial"]
    try:
        loaded = load_scenario(trial["scenario"], settings.scenario_root)
        registry = Registry.load(settings.project_root)
        opts = RunOptions(
            agent=trial["agent"],
            model=trial["model"],
            seed=trial["seed"],
            sandbox=spec["sandbox"],
            job=spec["job"],
            trial_key=spec["key"],
            repetition=trial["repetition"],
            budget=Budget(**spec["budget"]) if spec.get("budget") else None,
            replay=Path(spec["replay"]) if spec.get("replay") else None,
            agent_env=spec.get("agent_env") or None,
            agent_args=tuple(spec.get("agent_args") or ()),
        )
        result = execute(loaded, settings, registry, opts)
    except UserError as exc:
        return {"status": "refused", "outcome": None, "detail": exc.one_line()}
    except HarnessError as exc:
        return {"status": "error", "outcome": "error", "detail": exc.one_line()}
    return {
        "status": "done",
        "outcome": result.outcome,
        "score": result.report.get("score"),
        "run_dir": str(result.run_dir),
        "detail": result.report.get("error") or _phase_error(result.run_dir),
    }


def _phase_error(run_dir: Path) -> str:
    """The detail of the first phase that ended in ``error`` (why the trial is an error)."""
    try:
        phases = read_json(run_dir / "progress.json")["phases"]
    except (OSError, ValueError, KeyError):
        return ""
    return next((str(p.get("detail") or "") for p in phases if p.get("outcome") == "error"), "")


def main(argv: list[str]) -> int:
    spec_path, out_path = Path(argv[0]), Path(argv[1])
    signal.signal(signal.SIGTERM, _terminate)
    spec = read_json(spec_path)
    lock_fd = os.open(spec["lock"], os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(lock_fd, fcntl.LOCK_EX)
    orphaned = threading.Event()
    watch = threading.Thread(target=_watch_parent, args=(int(spec["parent"]), orphaned))
    watch.daemon = True
    watch.start()
    try:
        try:
            out = run(spec)
        except Exception as exc:  # an unexpected harness bug: infrastructure, not the agent
            out = {"status": "error", "outcome": "error", "detail": f"{type(exc).__name__}: {exc}"}
        write_json(out_path, out)
    finally:
        if orphaned.is_set() and spec.get("scratch"):  # nobody is left to collect or remove it
            shutil.rmtree(spec["scratch"], ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
