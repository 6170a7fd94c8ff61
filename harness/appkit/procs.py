"""Run an app under test: own process group, logs to files, free port, health, respawn.

Port choice has no bind-then-close race that goes unnoticed: the kit asks the kernel for
a free port, starts the app on it, and only accepts the start when the app answers its
health path *and* the listening socket on that port belongs to the app's process group
(read from ``/proc``). An app that died on "address already in use" is restarted on a
fresh port. Everything the kit started is killed on exit (context manager).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType

from harness.appkit.jail import Jail
from harness.errors import UserError

_IN_USE = ("address already in use", "errno 98", "eaddrinuse")
_PORT_ATTEMPTS = 5


class AppNotHealthy(Exception):
    """The app exited or never answered its health path within the budget.

    This is the app's failure (a check result), not the harness's: suites turn it into a
    failed root check rather than an infrastructure error.
    """

    def __init__(self, message: str, log_tail: str = "") -> None:
        self.log_tail = log_tail
        super().__init__(message)


def free_port() -> int:
    """A port the kernel considers free on 127.0.0.1 right now (verified after start)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _listeners(port: int) -> dict[str, int]:
    """Listening sockets on ``port``: inode -> owning uid (from ``/proc/net/tcp*``)."""
    found: dict[str, int] = {}
    # the calling thread's network namespace (``netns`` moves one thread, not the process)
    net = "/proc/thread-self/net" if Path("/proc/thread-self/net").exists() else "/proc/net"
    for table in (f"{net}/tcp", f"{net}/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            parts = line.split()
            if len(parts) > 9 and parts[3] == "0A" and int(parts[1].rsplit(":", 1)[1], 16) == port:
                found[parts[9]] = int(parts[7])
    return found


def _listen_inodes(port: int) -> set[str]:
    return set(_listeners(port))


def _group_pids(pgid: int) -> list[int]:
    """Live (non-zombie) processes whose process group is ``pgid``, from ``/proc``."""
    pids: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] != "Z":
            pids.append(int(entry.name))
    return pids


def owns_listener(port: int, pgid: int, uid: int | None = None) -> bool:
    """Whether a process in group ``pgid`` holds the listening socket on ``port``.

    A confined app runs as its own ``uid``; when the scorer may not read that process's
    descriptors (no ptrace capability in a container), the socket's owning uid decides
    (the uid is dedicated to the app, so nothing else can own it). Without ``/proc``
    (not Linux) this cannot be checked and returns True.
    """
    if not Path("/proc/net/tcp").exists():
        return True
    listeners = _listeners(port)
    if uid is not None and uid != 0 and uid in listeners.values():
        return True
    wanted = {f"socket:[{inode}]" for inode in listeners}
    for pid in _group_pids(pgid):
        fd_dir = Path(f"/proc/{pid}/fd")
        try:
            links = {os.readlink(fd_dir / fd) for fd in os.listdir(fd_dir)}
        except OSError:
            continue
        if links & wanted:
            return True
    return False


def _http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2.0) as resp:
            return 200 <= int(resp.status) < 300
    except (urllib.error.URLError, OSError, ValueError):
        return False


class AppProcess:
    """One app under test, restartable on the same arguments (and so the same data dir).

    ``argv`` may contain ``{port}``; it is filled with the chosen port at each spawn, and
    ``{data}`` with the jail's data folder. With a ``jail`` the app runs confined (its
    own user, its tree copy, a minimal environment; see ``jail``).
    stdout/stderr of spawn *n* go to ``logs/<name>-<n>.stdout.log`` / ``.stderr.log``.
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        logs: Path,
        health_path: str = "/health",
        env: Mapping[str, str] | None = None,
        budget: float = 15.0,
        name: str = "app",
        jail: Jail | None = None,
    ) -> None:
        if not argv:
            raise UserError("no command to start the app", field="argv", fix="pass argv")
        self.argv = list(argv)
        self.cwd = Path(cwd)
        self.logs = Path(logs)
        self.health_path = health_path
        self.jail = jail
        if jail is not None:  # confined: the jail's tree copy, data and minimal env
            self.cwd = jail.tree
            self.env = jail.env(env)
        else:
            self.env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
        self.budget = budget
        self.name = name
        self.port: int | None = None
        self.spawns = 0
        self._proc: subprocess.Popen[bytes] | None = None

    # -- lifecycle ---------------------------------------------------------------------
    def __enter__(self) -> AppProcess:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def url(self, path: str = "") -> str:
        if self.port is None:
            raise UserError("the app has not been started", fix="call start() first")
        return f"http://127.0.0.1:{self.port}{path}"

    def start(self) -> int:
        """Spawn and wait for health; returns the port. Raises ``AppNotHealthy``."""
        return self._launch(prefer=None)

    def respawn(self) -> int:
        """Kill what runs (SIGKILL), start again with the same arguments, wait for health.

        The previous port is tried first; a fresh one is used if it is still taken.
        """
        self.kill_group(signal.SIGKILL)
        return self._launch(prefer=self.port)

    def kill_group(self, sig: int = signal.SIGKILL) -> None:
        """Send ``sig`` to the app's whole process group; reap the leader on SIGKILL."""
        if self._proc is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self._proc.pid, sig)
        if sig == signal.SIGKILL:
            self._proc.wait()
            self._wait_group_gone(self._proc.pid)

    @staticmethod
    def _wait_group_gone(pgid: int, budget: float = 5.0) -> None:
        """SIGKILL is asynchronous: wait (bounded) until no group member still runs."""
        if not Path("/proc/net/tcp").exists():
            return
        deadline = time.monotonic() + budget
        while _group_pids(pgid) and time.monotonic() < deadline:
            time.sleep(0.02)

    def stop(self, grace: float = 3.0) -> None:
        """SIGTERM the group, SIGKILL whatever is left after ``grace`` seconds."""
        if self._proc is None:
            return
        self.kill_group(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._proc.wait(timeout=grace)
        self.kill_group(signal.SIGKILL)  # also members that outlived the leader

    def log_tail(self, chars: int = 2000) -> str:
        """The end of the latest spawn's stderr (for details in check rows)."""
        path = self._log_path("stderr")
        return path.read_text(errors="replace")[-chars:] if path.exists() else ""

    # -- internals ---------------------------------------------------------------------
    def _log_path(self, stream: str) -> Path:
        return self.logs / f"{self.name}-{self.spawns}.{stream}.log"

    def _spawn(self, port: int) -> None:
        self.spawns += 1
        self.port = port
        self.logs.mkdir(parents=True, exist_ok=True)
        data = str(self.jail.data) if self.jail is not None else ""
        argv = [a.replace("{port}", str(port)).replace("{data}", data) for a in self.argv]
        if self.jail is not None:
            argv = self.jail.wrap(argv)
        with self._log_path("stdout").open("wb") as out, self._log_path("stderr").open("wb") as err:
            try:
                self._proc = subprocess.Popen(
                    argv,
                    cwd=self.cwd,
                    env=self.env,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=err,
                    start_new_session=True,
                )
            except OSError as exc:
                raise AppNotHealthy(f"cannot start {argv[0]}: {exc}") from exc

    def _launch(self, prefer: int | None) -> int:
        port = prefer or free_port()
        attempt = 1
        while True:
            self._spawn(port)
            if self._wait_healthy():
                return port
            failure = self._failure()
            self.kill_group(signal.SIGKILL)
            in_use = any(s in failure.log_tail.lower() for s in _IN_USE)
            if not in_use or attempt >= _PORT_ATTEMPTS:
                raise failure
            port, attempt = free_port(), attempt + 1

    def _wait_healthy(self) -> bool:
        """True when healthy and owning the port; False when the app died or timed out."""
        assert self._proc is not None and self.port is not None
        deadline = time.monotonic() + self.budget
        url = self.url(self.health_path)
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                return False
            uid = self.jail.uid if self.jail is not None and self.jail.mode != "none" else None
            if _http_ok(url) and self.alive and owns_listener(self.port, self._proc.pid, uid):
                return True
            time.sleep(0.05)
        return False

    def _failure(self) -> AppNotHealthy:
        """Describe why the current spawn is not healthy (before it is killed)."""
        code = self._proc.poll() if self._proc else None
        how = f"exited with code {code}" if code is not None else "did not answer"
        return AppNotHealthy(
            f"{self.name} {how}: GET {self.health_path} on port {self.port} not healthy "
            f"within {self.budget:g}s",
            self.log_tail(),
        )
