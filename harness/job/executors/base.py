"""Where a job's trials run: the executor seam behind the job runner.

The runner decides *what* runs (classification, retries, the ledger); an executor
decides *where*. ``run`` blocks the calling scheduler thread until the trial ends and
returns what the worker reported (``harness.job.worker.run``'s dict, with ``run_dir``
naming the result folder on this machine), or None when the trial produced no word
(stopped, or its process died). ``stop`` ends every trial in flight, cleanly first.

- ``local``: one worker process per trial on this machine (``harness.job.worker``).
- ``ray``: one Ray task per trial on a cluster node that declares a ``docker``
  resource (``harness.job.executors.ray``); the result folder comes back to this machine.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from harness.config.settings import Settings
from harness.errors import UserError
from harness.util.fs import read_json, write_json

GRACE_S = 30.0  # how long a stopped trial may take to clean up before it is killed


@dataclass(frozen=True)
class TrialFiles:
    """The job-side files of one trial attempt."""

    spec: Path  # the worker's input (JSON)
    out: Path  # the worker's answer (JSON)
    log: Path  # appended to by every attempt


class Executor(Protocol):
    """Runs trials somewhere; used as a context manager around a job's run."""

    name: str

    def __enter__(self) -> Executor: ...

    def __exit__(self, *exc: object) -> None: ...

    def router_host(self) -> str | None:
        """The address the job's shared router binds so that every trial reaches it
        (None: the default, the Docker bridge of this machine)."""
        ...

    def slots(self) -> int | None:
        """Trials it can run at once (the default concurrency); None: unknown, 1."""
        ...

    def run(self, spec: dict[str, Any], files: TrialFiles) -> dict[str, Any] | None: ...

    def stop(self) -> None: ...


class LocalExecutor:
    """One worker process per trial, each in its own session (``harness.job.worker``)."""

    name = "local"

    def __init__(self, cwd: Path, router_host: str | None = None) -> None:
        self.cwd = cwd
        self._router_host = router_host
        self._lock = threading.Lock()
        self._stopped = False
        self._live: dict[str, subprocess.Popen[bytes]] = {}

    def __enter__(self) -> LocalExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def router_host(self) -> str | None:
        return self._router_host

    def slots(self) -> int | None:
        return None

    def run(
        self, spec: dict[str, Any], files: TrialFiles, env: dict[str, str] | None = None
    ) -> dict[str, Any] | None:
        """Run the trial in ``harness.job.worker``; ``env``: its whole environment
        (default: this process's)."""
        files.out.unlink(missing_ok=True)
        write_json(files.spec, spec)
        files.log.parent.mkdir(parents=True, exist_ok=True)
        key = str(spec["key"])
        with files.log.open("ab") as log:
            with self._lock:
                if self._stopped:
                    return None
                proc = subprocess.Popen(
                    [sys.executable, "-m", "harness.job.worker", str(files.spec), str(files.out)],
                    cwd=self.cwd,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
                self._live[key] = proc
            try:
                proc.wait()
            except BaseException:  # interrupted here (a cancelled Ray task): stop it cleanly
                with contextlib.suppress(ProcessLookupError):
                    proc.send_signal(signal.SIGTERM)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=GRACE_S)
                raise
            finally:
                with self._lock:
                    self._live.pop(key, None)
                kill_group(proc.pid)  # leftovers of the trial (servers, sleeps)
        try:
            data = read_json(files.out)
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def stop(self) -> None:
        """SIGTERM every worker, give them ``GRACE_S`` to clean up, then SIGKILL."""
        with self._lock:
            self._stopped = True
            procs = list(self._live.values())
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(timeout=GRACE_S)
            except subprocess.TimeoutExpired:
                kill_group(proc.pid)


def kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


EXECUTORS = ("local", "ray")


def make_executor(
    name: str, settings: Settings, *, address: str | None = None, router_host: str | None = None
) -> Executor:
    """The executor called ``name`` (``--executor``); ``address`` is the Ray cluster's."""
    if name == "local":
        if address:
            raise UserError(
                "--address is for the ray executor",
                field="--address",
                fix="add --executor ray, or drop --address",
            )
        return LocalExecutor(settings.project_root, router_host)
    if name == "ray":
        from harness.job.executors.ray import RayExecutor  # imports ray lazily itself

        return RayExecutor(settings, address=address, router_host=router_host)
    raise UserError(
        f"unknown executor '{name}'", field="--executor", fix=f"one of: {', '.join(EXECUTORS)}"
    )
