"""The app jail under ``--sandbox local`` as root is an allowlist: a minimal root and a
network namespace of its own, shared only with the scoring's mocks and probes."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from harness.appkit.jail import Jail, detect_mode
from harness.appkit.netns import active, private_network
from harness.appkit.procs import AppProcess

root_only = pytest.mark.skipif(
    os.geteuid() != 0 or detect_mode() != "namespace", reason="needs root with namespaces"
)

PROBE = """
import json, os, socket, sys
seen = {"uid": os.getuid(), "top": sorted(os.listdir("/")), "tmp": os.listdir("/tmp")}
for path in sys.argv[1:]:
    seen[path] = os.path.exists(path)
try:
    open("/usr/harness-jail-probe", "w")
    seen["usr writable"] = True
except OSError:
    seen["usr writable"] = False
open(os.path.join(os.environ["TMPDIR"], "scratch"), "w").write("x")
print(json.dumps(seen))
"""


@pytest.mark.unit
def test_only_a_start_from_the_main_thread_is_tied_to_its_starter(tmp_path: Path) -> None:
    jail = Jail.__new__(Jail)  # wrap's argv only: no root needed
    jail.mode, jail.uid, jail.root, jail.home, jail.tree = (
        "namespace",
        61000,
        tmp_path,
        tmp_path,
        tmp_path,
    )
    jail.hidden, jail.ro_binds = [], []
    assert jail.wrap(["app"])[0] == "setpriv"
    seen: list[str] = []
    worker = threading.Thread(target=lambda: seen.append(jail.wrap(["app"])[0]))
    worker.start()
    worker.join()
    assert seen == ["unshare"]  # a worker thread that ends would SIGKILL a live app


@pytest.mark.integration
@root_only
def test_the_app_sees_a_minimal_root(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "probe.py").write_text(PROBE)
    jail = Jail(tree)
    try:
        argv = jail.wrap([jail.python, "probe.py", str(tmp_path), "/work", "/root", "/home"])
        run = subprocess.run(argv, env=jail.env(), capture_output=True, text=True, timeout=30)
        assert run.returncode == 0, run.stderr
        seen = json.loads(run.stdout)
        assert seen["uid"] == jail.uid != 0
        assert set(seen["top"]) <= {"bin", "sbin", "lib", "lib32", "lib64", "libx32"} | {
            "usr",
            "etc",
            "dev",
            "proc",
            "tmp",
        }
        assert seen["tmp"] == [jail.home.name]
        assert not any(seen[p] for p in (str(tmp_path), "/work", "/root", "/home"))
        assert seen["usr writable"] is False
        assert (jail.home / "tmp" / "scratch").read_text() == "x"
    finally:
        jail.close()
    assert not jail.home.exists() and not jail.sys.exists()


def _listener() -> tuple[socket.socket, int]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(4)
    return sock, int(sock.getsockname()[1])


def _reaches(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        return True
    except OSError:
        return False


@pytest.mark.integration
@root_only
def test_the_scoring_has_a_network_of_its_own(tmp_path: Path) -> None:
    host, host_port = _listener()
    try:
        with private_network() as private:
            assert private and active()
            assert not _reaches(host_port)  # the host's loopback is not there
            mock, mock_port = _listener()  # a mock the scorer starts: in the namespace
            seen: list[bool] = []
            worker = threading.Thread(target=lambda: seen.append(_reaches(mock_port)))
            worker.start()
            worker.join()
            assert seen == [True]  # threads the scoring starts share it
            tree = tmp_path / "tree"
            tree.mkdir()
            (tree / "srv.py").write_text(
                "import http.server, socket, sys\n"
                f"ok = socket.socket().connect_ex(('127.0.0.1', {host_port})) != 0\n"
                "class H(http.server.BaseHTTPRequestHandler):\n"
                "    def do_GET(self):\n"
                "        self.send_response(200 if ok else 500); self.end_headers()\n"
                "http.server.HTTPServer(('127.0.0.1', int(sys.argv[1])), H).serve_forever()\n"
            )
            jail = Jail(tree)
            try:
                assert jail.private_net and "network namespace" in jail.statement()
                app = AppProcess(
                    [jail.python, "srv.py", "{port}"], cwd=tree, logs=tmp_path / "logs", jail=jail
                )
                with app:  # healthy: the probe reaches it, and it cannot reach the host
                    app.start()
            finally:
                jail.close()
            mock.close()
        assert not active()
        assert _reaches(host_port)  # the thread is back on the host's network
    finally:
        host.close()


CONTROLLER = """
import subprocess, sys, time
from pathlib import Path
from harness.appkit.jail import Jail
jail = Jail(Path(sys.argv[1]))
argv = jail.wrap([jail.python, "-c", "import time; time.sleep(120)"])
proc = subprocess.Popen(argv, env=jail.env(), start_new_session=True)
print(proc.pid, flush=True)
time.sleep(120)
"""


def _descendants(pid: int) -> set[int]:
    found: set[int] = set()
    todo = [pid]
    while todo:
        for task in Path(f"/proc/{todo.pop()}/task").glob("*/children"):
            with contextlib.suppress(OSError):
                kids = {int(k) for k in task.read_text().split()}
                todo += sorted(kids - found)
                found |= kids
    return found


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.integration
@root_only
def test_the_jailed_app_dies_with_a_scorer_killed_by_sigkill(tmp_path: Path) -> None:
    """No ``finally`` runs in a SIGKILLed scorer: the app must not outlive it anyway."""
    tree = tmp_path / "tree"
    tree.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp_path)}  # the jail's folders land here
    scorer = subprocess.Popen(
        [sys.executable, "-c", CONTROLLER, str(tree)], env=env, stdout=subprocess.PIPE, text=True
    )
    jailed: set[int] = set()
    try:
        assert scorer.stdout is not None
        top = int(scorer.stdout.readline())
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:  # the app runs as the jail's uid, under its root
            jailed = {top} | _descendants(top)
            uids = {
                Path(f"/proc/{p}/status").read_text().split("Uid:")[1].split()[0]
                for p in jailed
                if _alive(p)
            }
            if uids - {"0"}:
                break
            time.sleep(0.05)
        else:
            pytest.fail(f"the jailed app did not start: {sorted(jailed)}")
        scorer.kill()
        scorer.wait()
        deadline = time.monotonic() + 10
        while any(_alive(p) for p in jailed) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [p for p in jailed if _alive(p)], "the jailed app outlived its scorer"
    finally:
        scorer.kill()
        scorer.wait()
        for pid in jailed:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
