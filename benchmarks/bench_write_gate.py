"""What the write gate costs a start: a writer that imports, opens and commits like an app
starting (sqlite, one commit per row, ``--rows`` rows in WAL mode) run plainly and
through invoice-sync's write gate (``suite/gate.py``: each file-changing call waits on
the scorer), alternating rounds; prints each side's median and the ratio.

    python benchmarks/bench_write_gate.py [--rounds 10] [--rows 200]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
GATE = ROOT / "scenarios" / "apps" / "invoice-sync" / "suite" / "gate.py"

WRITER = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1] + "/app.db")
db.execute("PRAGMA journal_mode=WAL")
db.execute("PRAGMA synchronous=FULL")
db.execute("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v TEXT)")
for i in range(int(sys.argv[2])):
    db.execute("INSERT INTO t (v) VALUES (?)", (str(i) * 20,))
    db.commit()
"""


def _gate_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("write_gate", GATE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _once(gate: ModuleType | None, rows: int) -> tuple[float, int]:
    with tempfile.TemporaryDirectory(prefix="bench-gate-") as tmp:
        data = Path(tmp) / "data"
        data.mkdir()
        argv = [sys.executable, "-c", WRITER, str(data), str(rows)]
        if gate is None:
            began = time.perf_counter()
            subprocess.run(argv, check=True)
            return time.perf_counter() - began, 0
        proc: subprocess.Popen[bytes] | None = None

        def kill() -> None:
            if proc is not None:
                os.killpg(proc.pid, signal.SIGKILL)

        with gate.WriteGate(data, Path(tmp) / "gate", kill, 0) as counting:
            began = time.perf_counter()
            proc = subprocess.Popen(counting.wrap(argv), start_new_session=True)
            if proc.wait() != 0:
                raise SystemExit(f"the gated writer failed: {counting.reason or proc.returncode}")
            return time.perf_counter() - began, int(counting.writes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--rows", type=int, default=200)
    args = parser.parse_args()
    gate = _gate_module()
    plain, gated, writes = [], [], 0
    for _ in range(args.rounds):
        plain.append(_once(None, args.rows)[0])
        seconds, writes = _once(gate, args.rows)
        gated.append(seconds)
    p, g = statistics.median(plain), statistics.median(gated)
    print(f"writer: {args.rows} commits, {writes} file writes counted by the gate")
    print(f"plain   median {p * 1000:8.1f} ms over {args.rounds} rounds")
    print(f"gated   median {g * 1000:8.1f} ms ({(g - p) / max(writes, 1) * 1e6:.0f} us a write)")
    print(f"ratio   {g / p:.2f}x (gated / plain)")


if __name__ == "__main__":
    main()
