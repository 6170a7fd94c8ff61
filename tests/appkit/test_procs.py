"""AppProcess: start in its own group, health, SIGKILL, respawn on the same data, cleanup."""

from __future__ import annotations

import os
import signal
import socket
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.appkit import procs
from harness.appkit.procs import AppNotHealthy, AppProcess

pytestmark = pytest.mark.integration

# A tiny app: counts its starts in DATA/starts, serves /health and /starts, and leaves a
# child process in its group (a sleeping grandchild) to prove the whole group dies.
TINY = r"""
import http.server, subprocess, sys
from pathlib import Path
port, data = int(sys.argv[1]), Path(sys.argv[2])
data.mkdir(exist_ok=True)
starts = int((data / "starts").read_text()) + 1 if (data / "starts").exists() else 1
(data / "starts").write_text(str(starts))
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
(data / "child").write_text(str(child.pid))
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = str(starts).encode()
        self.send_response(200 if self.path in ("/health", "/starts") else 404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
print("ready", flush=True)
http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
"""


def _gone(pid: int) -> bool:
    """True when ``pid`` no longer runs (reaped, or a zombie awaiting its parent)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state == "Z"


def _group_gone(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    return not procs._group_pids(pgid)  # only zombies left


@pytest.fixture
def tiny(tmp_path: Path) -> Iterator[tuple[AppProcess, Path]]:
    script = tmp_path / "tiny.py"
    script.write_text(TINY)
    data = tmp_path / "data"
    app = AppProcess(
        [sys.executable, str(script), "{port}", str(data)],
        cwd=tmp_path,
        logs=tmp_path / "logs",
        budget=15.0,
        name="tiny",
    )
    try:
        yield app, data
    finally:
        app.stop()


def _get(app: AppProcess, path: str) -> str:
    with urllib.request.urlopen(app.url(path), timeout=5) as resp:
        return str(resp.read().decode())


def test_start_kill_respawn_keeps_data_and_leaves_nothing(tiny: tuple[AppProcess, Path]) -> None:
    app, data = tiny
    port = app.start()
    assert app.alive and _get(app, "/starts") == "1"
    first_pid = app.pid
    assert first_pid is not None
    child = int((data / "child").read_text())
    assert procs.owns_listener(port, first_pid)

    app.kill_group(signal.SIGKILL)
    assert not app.alive and _gone(child) and _group_gone(first_pid)

    app.respawn()
    assert app.alive and app.pid != first_pid
    assert _get(app, "/starts") == "2"  # same data directory, second start
    assert (app.logs / "tiny-2.stdout.log").read_text().startswith("ready")
    second_pid, second_child = app.pid, int((data / "child").read_text())
    assert second_pid is not None

    app.stop()
    assert not app.alive and _gone(second_child) and _group_gone(second_pid)


def test_context_manager_cleans_up_on_error(tmp_path: Path) -> None:
    script = tmp_path / "tiny.py"
    script.write_text(TINY)
    pid = None
    with (
        pytest.raises(RuntimeError),
        AppProcess(
            [sys.executable, str(script), "{port}", str(tmp_path / "d")],
            cwd=tmp_path,
            logs=tmp_path / "logs",
        ) as app,
    ):
        app.start()
        pid = app.pid
        raise RuntimeError("a check blew up")
    assert pid is not None and _group_gone(pid)


def test_port_in_use_is_detected_and_another_port_used(
    tiny: tuple[AppProcess, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    app, _ = tiny
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        taken = squatter.getsockname()[1]
        ports = iter([taken])
        real = procs.free_port
        monkeypatch.setattr(procs, "free_port", lambda: next(ports, None) or real())
        port = app.start()
        assert port != taken and app.spawns == 2
        assert "address already in use" in (app.logs / "tiny-1.stderr.log").read_text().lower()
        assert _get(app, "/starts") == "2"  # the first spawn started, then failed to bind


def test_an_app_that_dies_is_not_healthy(tmp_path: Path) -> None:
    dies = "import sys; print('boom', file=sys.stderr); sys.exit(4)"
    with (
        AppProcess([sys.executable, "-c", dies], cwd=tmp_path, logs=tmp_path / "logs") as app,
        pytest.raises(AppNotHealthy) as err,
    ):
        app.start()
    assert "exited with code 4" in str(err.value) and "boom" in err.value.log_tail


def test_an_app_without_health_times_out(tmp_path: Path) -> None:
    script = tmp_path / "tiny.py"
    script.write_text(TINY)
    with AppProcess(
        [sys.executable, str(script), "{port}", str(tmp_path / "d")],
        cwd=tmp_path,
        logs=tmp_path / "logs",
        health_path="/nope",
        budget=1.0,
    ) as app:
        with pytest.raises(AppNotHealthy, match="did not answer"):
            app.start()
        pid = app.pid
    assert pid is not None and _group_gone(pid)
