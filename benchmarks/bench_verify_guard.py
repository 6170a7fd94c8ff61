"""What keeping the verdict out of the code's reach costs: verification time with the
guard (restoration before every target, the tests' own user, the reaper) against the
same verification with the guard switched off in-process, side by side.

Verifies the reference tree of smoke/py-fast and smoke/go-fast locally (``verify_local``,
real pytest / go test), alternating guarded and unguarded rounds, and prints the median
seconds of each and their ratio.

    python benchmarks/bench_verify_guard.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.agents.builtin import OracleAgent  # noqa: E402
from harness.backends.local.verify import verify_local  # noqa: E402
from harness.config.settings import Settings  # noqa: E402
from harness.scenario import load_scenario  # noqa: E402
from harness.trial.workspace import read_state, setup  # noqa: E402
from harness.verify import flow, guard  # noqa: E402
from harness.verify.isolation import test_command, test_user  # noqa: E402
from harness.verify.request import make_request  # noqa: E402


def _plain(cmd, cwd, env, timeout, user):  # type: ignore[no-untyped-def]
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, timeout=timeout)
    return test_user.Ran(proc.returncode, (proc.stdout + proc.stderr).decode(), 0)


@contextlib.contextmanager
def unguarded() -> Iterator[None]:
    """No restoration, no user switch, no reaper: the verifier as it was."""
    with (
        mock.patch.object(guard, "restore_runner_files", lambda *a, **k: []),
        mock.patch.object(guard, "effective_user", lambda *a: None),
        mock.patch.object(flow, "effective_user", lambda *a: None),
        mock.patch.object(test_command, "run_reaped", _plain),
    ):
        yield


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    base = Settings.from_env()
    tmp = Path(tempfile.mkdtemp(prefix="bench-guard-"))
    for name in ("smoke/py-fast", "smoke/go-fast"):
        loaded = load_scenario(name, ROOT / "scenarios")
        settings = dataclasses.replace(base, workspace=tmp / name)
        ws = setup(loaded, settings)
        OracleAgent.apply(loaded, ws)
        request = make_request(loaded, ws, read_state(ws, loaded).baseline, loaded.seed or "0" * 16)
        verify_local(ws, request)  # warm caches (Go's build cache per user)
        times: dict[str, list[float]] = {"guarded": [], "unguarded": []}
        for _ in range(args.rounds):
            for label in ("guarded", "unguarded"):
                ctx = unguarded() if label == "unguarded" else contextlib.nullcontext()
                with ctx:
                    began = time.monotonic()
                    outcome = verify_local(ws, request)
                    times[label].append(time.monotonic() - began)
                assert outcome.success, f"{name} {label}: the reference must pass"
        g, u = statistics.median(times["guarded"]), statistics.median(times["unguarded"])
        print(f"{name:16} guarded {g:6.2f}s  unguarded {u:6.2f}s  ratio {g / u:5.2f}")


if __name__ == "__main__":
    main()
