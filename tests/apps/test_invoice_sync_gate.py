"""apps/invoice-sync 4.2: start-up kills exactly after a chosen file write, at any speed.

The scorer's write gate (``suite/gate.py``) stops every file-changing call of the app in a
seccomp user notification until the scorer has read the data folder's inotify events, so
a SIGKILL after the nth write leaves the files exactly as that write left them. These
tests run real writer processes under the gate: the files left after the kill must be
the nth write's, whatever the writer's pace (a tight loop is the fast disk that walked
past the asynchronous kill in CI).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.suites import suite_names

pytestmark = pytest.mark.unit

APPEND = """
import sys
for i in range(300):
    with open(sys.argv[1] + "/log", "a") as fh:  # created by the first write
        fh.write(f"{i}\\n")
"""

REPLACE = """
import os, sys
for i in range(50):  # the atomic-replace idiom: write a temporary file, rename it over
    tmp = sys.argv[1] + "/state.tmp"
    with open(tmp, "w") as fh:
        fh.write(str(i))
    os.rename(tmp, sys.argv[1] + "/state")
"""


@pytest.fixture(scope="module")
def m() -> Any:
    return suite_names("invoice-sync")


def _gated_run(m: Any, tmp_path: Path, script: str, nth: int) -> tuple[Any, int]:
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    proc: subprocess.Popen[bytes] | None = None

    def kill() -> None:
        assert proc is not None
        os.killpg(proc.pid, signal.SIGKILL)

    with m.WriteGate(data, tmp_path / "gate", kill, nth) as gate:
        argv = gate.wrap([sys.executable, "-c", script, str(data)])
        proc = subprocess.Popen(argv, start_new_session=True)
        code = proc.wait(timeout=60)
    return gate, code


def _lines(tmp_path: Path) -> int:
    log = tmp_path / "data" / "log"
    return len(log.read_text().splitlines()) if log.exists() else -1


@pytest.mark.skipif(sys.platform != "linux", reason="seccomp and inotify are Linux's")
@pytest.mark.parametrize("nth", [1, 2, 3, 57, 150, 299, 301])
def test_a_kill_after_the_nth_write_leaves_exactly_that_write_s_files(
    m: Any, tmp_path: Path, nth: int
) -> None:
    gate, code = _gated_run(m, tmp_path, APPEND, nth)
    assert gate.gated, gate.reason
    assert gate.fired.is_set() and code == -signal.SIGKILL
    assert gate.writes == nth
    # write 1 creates the file (empty), write k appends line k - 1
    assert _lines(tmp_path) == (0 if nth == 1 else nth - 1)


@pytest.mark.skipif(sys.platform != "linux", reason="seccomp and inotify are Linux's")
def test_counting_only_lets_every_write_through_and_counts_it(m: Any, tmp_path: Path) -> None:
    gate, code = _gated_run(m, tmp_path, APPEND, 0)
    assert code == 0 and not gate.fired.is_set()
    assert gate.writes == 301 and _lines(tmp_path) == 300


@pytest.mark.skipif(sys.platform != "linux", reason="seccomp and inotify are Linux's")
@pytest.mark.parametrize("nth", range(1, 9))
def test_a_rename_is_a_write_of_its_own(m: Any, tmp_path: Path, nth: int) -> None:
    # per round: create the temporary file, write it, rename it over the state file
    gate, _ = _gated_run(m, tmp_path, REPLACE, nth)
    assert gate.writes == nth
    data = tmp_path / "data"
    rounds, step = divmod(nth, 3)
    state = data / "state"
    assert (state.read_text() if state.exists() else None) == (str(rounds - 1) if rounds else None)
    tmp = data / "state.tmp"
    assert tmp.exists() == (step > 0)
    assert (tmp.read_text() if step == 2 else "") == (str(rounds) if step == 2 else "")


@pytest.mark.skipif(sys.platform != "linux", reason="seccomp and inotify are Linux's")
def test_a_start_repeated_by_the_kit_is_gated_again(m: Any, tmp_path: Path) -> None:
    # the kit starts again on a fresh port when the first start died on a taken one
    data = tmp_path / "data"
    data.mkdir()
    procs: list[subprocess.Popen[bytes]] = []

    def kill() -> None:
        os.killpg(procs[-1].pid, signal.SIGKILL)

    with m.WriteGate(data, tmp_path / "gate", kill, 3) as gate:
        for script in ("raise SystemExit(98)", APPEND):
            argv = gate.wrap([sys.executable, "-c", script, str(data)])
            procs.append(subprocess.Popen(argv, start_new_session=True))
            procs[-1].wait(timeout=60)
    assert [p.returncode for p in procs] == [98, -signal.SIGKILL]
    assert gate.writes == 3 and _lines(tmp_path) == 2


@pytest.mark.skipif(sys.platform != "linux", reason="seccomp and inotify are Linux's")
def test_reads_pass_the_gate_without_counting(m: Any, tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "stored").write_text("x" * 10)
    script = "import sys\nfor _ in range(100):\n    open(sys.argv[1] + '/stored').read()\n"
    gate, code = _gated_run(m, tmp_path, script, 1)
    assert code == 0 and gate.writes == 0 and not gate.fired.is_set()


def test_an_unknown_architecture_is_refused_with_its_name(
    m: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate_module = sys.modules[m.WriteGate.__module__]
    monkeypatch.setattr(gate_module, "_machine", lambda: "sparc64")
    with pytest.raises(OSError, match="sparc64"):
        gate_module.install()


def test_the_filter_has_one_target_per_jump(m: Any) -> None:
    gate_module = sys.modules[m.WriteGate.__module__]
    for machine in ("x86_64", "aarch64"):
        program = gate_module.filter_program(machine)
        assert len(program) % 8 == 0 and len(program) // 8 < 256  # jumps are one byte


@pytest.mark.parametrize("writes", [0, 1, 3, 4, 7, 9, 12, 13, 40, 2439])
def test_start_up_kill_points_cover_both_ends_and_every_slice(m: Any, writes: int) -> None:
    points = m.startup_kill_points("0123456789abcdef", writes)
    assert points == sorted(set(points)) and all(1 <= p <= writes for p in points)
    first = list(range(1, min(writes, m.STARTUP_FIRST) + 1))
    last = [writes - k for k in range(m.STARTUP_LAST, 0, -1) if writes - k > 0]
    assert points[: len(first)] == first  # right after each of the first writes
    assert set(last) <= set(points)  # right before each of the last ones
    if writes <= m.STARTUP_FIRST + m.STARTUP_LAST + m.STARTUP_SPREAD:
        assert points == list(range(1, writes)) or points == first  # small: all of them
    low_end, high_end = m.STARTUP_FIRST + 1, writes - m.STARTUP_LAST - 1
    rest = high_end - low_end + 1
    for k in range(m.STARTUP_SPREAD if rest > 0 else 0):  # one inside each slice
        low = low_end + rest * k // m.STARTUP_SPREAD
        high = low_end + rest * (k + 1) // m.STARTUP_SPREAD - 1
        if high >= low:
            assert any(low <= p <= high for p in points), (k, points)


def test_start_up_kill_points_are_the_seed_s(m: Any) -> None:
    one = m.startup_kill_points("0123456789abcdef", 2439)
    assert one == m.startup_kill_points("0123456789abcdef", 2439)
    others = {tuple(m.startup_kill_points(f"{i:016x}", 2439)) for i in range(20)}
    assert len(others) > 15  # drawn, not fixed
