"""The host as a sandbox: commands run with ``subprocess`` in the workspace folder.

No isolation at all; meant for development and for machines without Docker. Each command
runs in its own session so a timeout can kill the whole process group, grandchildren
included, not just the direct child; and inside the sandbox's own cgroups
(``proctrack``), so that ``stop`` kills every process any command started, a ``setsid``
daemon included, before the trial goes on to verification.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

from harness.errors import UserError
from harness.sandbox.base import ExecResult, SandboxSpec
from harness.sandbox.proctrack import ProcessTracker
from harness.util.agentfiles import OverCap, check_caps


class LocalSandbox:
    """Runs commands on the host, in ``spec.workspace``."""

    def __init__(self, spec: SandboxSpec) -> None:
        if spec.workspace is None:
            raise UserError(
                "a local sandbox needs a workspace folder",
                field="workspace",
                fix="set SandboxSpec.workspace",
            )
        self.spec = spec
        self._root = Path(spec.workspace).resolve()
        self._proc: subprocess.Popen[bytes] | None = None
        self._interrupted: str | None = None
        self._tracker: ProcessTracker | None = None

    @property
    def project_dir(self) -> str:
        return str(self._root)

    def start(self) -> None:
        """Make sure the workspace exists; nothing else to start."""
        self._root.mkdir(parents=True, exist_ok=True)

    def exec(
        self,
        cmd: list[str],
        *,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        timeout: float | None = None,
    ) -> ExecResult:
        """Run ``cmd``; on timeout kill its process group and report ``timed_out``."""
        if self._interrupted:  # the agent has been stopped: refuse at once
            return ExecResult(None, "", "", 0.0, limit=self._interrupted)
        if self._tracker is None:
            self._tracker = ProcessTracker()
        tracker = self._tracker
        full_env = {**os.environ, **self.spec.env, **(env or {}), **tracker.env()}
        workdir = self._resolve(cwd) if cwd else self._root
        began = time.monotonic()
        try:
            proc = subprocess.Popen(
                cmd,
                cwd=workdir,
                env=full_env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                preexec_fn=tracker.enter if tracker.groups else None,
            )
        except (FileNotFoundError, PermissionError) as exc:
            return ExecResult(127, "", str(exc), time.monotonic() - began)
        self._proc = proc
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc.pid)
            out, err = proc.communicate()
            return ExecResult(None, _text(out), _text(err), time.monotonic() - began, True)
        finally:
            self._proc = None
            if proc.poll() is None:  # interrupted (KeyboardInterrupt): leave nothing behind
                _kill_group(proc.pid)
                proc.wait()
        duration = time.monotonic() - began
        if self._interrupted:
            return ExecResult(
                proc.returncode, _text(out), _text(err), duration, limit=self._interrupted
            )
        return ExecResult(proc.returncode, _text(out), _text(err), duration)

    def interrupt(self, reason: str) -> None:
        """Kill the running command's process group; its result carries ``limit=reason``."""
        self._interrupted = reason
        proc = self._proc
        if proc is not None and proc.poll() is None:
            _kill_group(proc.pid)

    def copy_in(self, src: Path, dest: str) -> None:
        """Copy a host file or folder to ``dest`` (relative paths land in the workspace)."""
        _copy(Path(src), self._resolve(dest))

    def copy_out(self, src: str, dest: Path, max_bytes: int | None = None) -> None:
        """Copy ``src`` (relative paths are in the workspace) to the host path ``dest``;
        ``OverCap`` when its apparent size is over ``max_bytes`` (nothing copied)."""
        path = self._resolve(src)
        if max_bytes is not None and path.is_dir():  # bytes, entries and depth capped
            check_caps(path, max_bytes, skip_top=frozenset())
        elif max_bytes is not None and path.exists():
            size = path.stat().st_size
            if size > max_bytes:
                raise OverCap(f"{src} is over the {max_bytes} bytes cap ({size} bytes)")
        _copy(path, Path(dest))

    def stop(self) -> None:
        """Kill every process any command started (the workspace belongs to the caller)."""
        if self._tracker is not None:
            self._tracker.close()
            self._tracker = None

    def _resolve(self, path: str) -> Path:
        candidate = Path(path)
        return candidate if candidate.is_absolute() else self._root / candidate


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _text(data: bytes | None) -> str:
    return (data or b"").decode("utf-8", errors="replace")


def _copy(src: Path, dest: Path) -> None:
    if not src.exists():
        raise FileNotFoundError(f"nothing to copy at {src}")
    if src.is_dir():
        shutil.copytree(src, dest, symlinks=True, dirs_exist_ok=True)
    else:
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest)
