"""apps/invoice-sync 4.2: where the app listens (M-RUN-1) and kills while it starts (M-DUR-2).

The listening check reads the kernel's socket table, not anything the app says; these
tests open real sockets on loopback and on the wildcard addresses and read the verdicts.
The write trap counts the app's file events (inotify) and kills at the nth (the mid-sync
kill); the start-up kills go through the write gate (test_invoice_sync_gate.py).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from harness.appkit.fixtures import build_dataset
from tests.support.suites import suite_names

SEED = "0123456789abcdef"


@pytest.fixture(scope="module")
def m() -> Any:
    return suite_names("invoice-sync")


@contextlib.contextmanager
def listening(family: socket.AddressFamily, host: str, v6only: int = 1) -> Iterator[int]:
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, v6only)
        sock.bind((host, 0))
        sock.listen()
        yield int(sock.getsockname()[1])


@pytest.mark.parametrize(
    ("family", "host", "v6only", "seen", "ok"),
    [
        (socket.AF_INET, "127.0.0.1", 1, ["127.0.0.1"], True),
        (socket.AF_INET, "0.0.0.0", 1, ["0.0.0.0"], False),
        (socket.AF_INET, "", 1, ["0.0.0.0"], False),
        (socket.AF_INET6, "::", 0, ["::"], False),
        (socket.AF_INET6, "::1", 1, ["::1"], True),
    ],
)
def test_the_kernel_says_where_a_socket_listens(
    m: Any, family: socket.AddressFamily, host: str, v6only: int, seen: list[str], ok: bool
) -> None:
    try:
        ctx = listening(family, host, v6only)
        port = ctx.__enter__()
    except OSError as exc:  # no IPv6 on this machine
        pytest.skip(f"cannot listen on {host!r}: {exc}")
    try:
        assert m.listen_addresses(port) == seen
        assert m.loopback_only(seen) is ok
    finally:
        ctx.__exit__(None, None, None)


def test_mapped_loopback_counts_and_nothing_listening_does_not(m: Any) -> None:
    assert m.loopback_only(["::ffff:127.0.0.1"])
    assert not m.loopback_only(["::ffff:10.0.0.1"])
    assert not m.loopback_only([])
    assert m.listen_addresses(None) == []


def _listing(order: list[str]) -> Any:
    body = [{"id": i} for i in order]
    return SimpleNamespace(ok=True, json=lambda: body, status=200, error=None)


def _judge(m: Any, after_kills: list[list[str]] | None, error: str | None = None) -> float:
    """durability.startup_kill's score when the restarts after the kills served these."""
    ds = build_dataset(SEED)
    ids = [i.id for i in ds.invoices]
    ev = m.Evidence(dataset=ds, evidence_dir=Path("/nonexistent"))
    ev.restored = _listing(ids)
    ev.startup_kills = [(f"write {n}", _listing(o)) for n, o in enumerate(after_kills or [], 1)]
    ev.startup_kill_error = error
    return float(m.durability_startup_kill(ev).score)


def test_a_start_up_kill_that_loses_or_reorders_fails(m: Any) -> None:
    ids = [i.id for i in build_dataset(SEED).invoices]
    assert _judge(m, []) == 1.0  # a start that writes nothing: not killed
    assert _judge(m, [ids, ids]) == 1.0
    assert _judge(m, [ids, ids[:-1]]) == 0.0  # the second kill lost one
    assert _judge(m, [[ids[1], ids[0], *ids[2:]]]) == 0.0  # renumbered
    assert _judge(m, [ids], error="no restart after a kill at start-up write 2") == 0.0


def test_a_restart_after_a_start_up_kill_must_still_read_done(m: Any) -> None:
    """durability.startup_done reads /api/status once after each restart: a start that
    clears its done mark and sets it again fails when a kill fell in between."""
    ds = build_dataset(SEED)
    ids = [i.id for i in ds.invoices]

    def judge(states: list[Any], restored: list[str] = ids) -> float:
        ev = m.Evidence(dataset=ds, evidence_dir=Path("/nonexistent"))
        ev.restored = _listing(restored)
        ev.startup_kills = [(f"write {n}", _listing(ids)) for n in range(1, len(states) + 1)]
        ev.startup_kill_states = states
        return float(m.durability_startup_done(ev).score)

    done = {"state": "done", "count": len(ids)}
    assert judge([done, done, done]) == 1.0
    assert judge([done, {"state": "syncing", "count": len(ids)}, done]) == 0.0
    assert judge([done, None, done]) == 0.0  # not JSON, or no answer
    assert judge([]) == 1.0  # a start that writes nothing: nothing to kill in it
    assert judge([done], restored=[]) == 0.0  # nothing stored: absent, a real zero


WRITER = """
import sys, time, pathlib
d = pathlib.Path(sys.argv[1])
print("up", flush=True)
for n in range(int(sys.argv[2])):
    (d / f"f{n}").write_text("x")
    time.sleep(0.2)
time.sleep(30)
"""


@pytest.mark.parametrize(("writes", "nth", "killed"), [(3, 1, True), (3, 3, True), (1, 3, False)])
def test_the_trap_kills_at_the_nth_file_event(
    m: Any, tmp_path: Path, writes: int, nth: int, killed: bool
) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(tmp_path), str(writes)],
        start_new_session=True,
        stdout=subprocess.PIPE,
    )
    app = SimpleNamespace(pid=proc.pid)
    try:
        with m.WriteTrap(tmp_path, app, nth) as trap:
            trap.arm()
            assert proc.stdout is not None and proc.stdout.readline() == b"up\n"
            fired = trap.fired.wait(writes * 0.2 + 1.5)
        assert fired is killed
        if killed:
            assert proc.wait(5) == -signal.SIGKILL
            # two events per file (created, modified): nth counts events, not files
            assert len(list(tmp_path.iterdir())) <= nth
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(5)


def test_every_module_of_the_suite_is_in_its_fingerprint() -> None:
    """A module left out of the sources (4.2's listeners.py, once) could change what the
    suite grades without changing its era."""
    from tests.support.suites import app_suite

    suite = app_suite("invoice-sync").suite
    folder = Path(suite.thresholds).parent if suite.thresholds else None
    assert folder is not None
    sources = {Path(p).name for p in suite.source_files()}
    assert {p.name for p in folder.glob("*.py")} - {"__init__.py"} <= sources
