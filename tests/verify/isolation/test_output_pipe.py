"""A report stream taken over in the test process ends the run, and the target is rejected."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harness.verify.isolation import output_pipe
from harness.verify.isolation.test_user import run_reaped
from harness.verify.runners import run_target
from tests.support.forgers import PY_CALC as CALC
from tests.support.forgers import PY_HIDDEN as HIDDEN
from tests.support.forgers import spare_junit


def test_only_the_tampered_status_is_a_rejection() -> None:
    assert output_pipe.rejection(output_pipe.TAMPERED) is not None
    assert (
        output_pipe.rejection(0) is output_pipe.rejection(1) is output_pipe.rejection(None) is None
    )


SHOW = "import os; print(os.environ[{env!r}], os.readlink('/proc/self/fd/1'))"


@pytest.mark.integration
def test_the_run_is_told_which_pipe_harness_reads(tmp_path: Path) -> None:
    cmd = [sys.executable, "-c", SHOW.format(env=output_pipe.ENV)]
    ran = run_reaped(cmd, tmp_path, {}, 60, None)
    named, seen = ran.output.split()
    assert ran.returncode == 0 and named == seen and named.startswith("pipe:[")


# an honest suite's code that prints and leaves a child holding the run's output
NOISY = """
import subprocess, sys
print("hello from calc")
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
"""
# a thread of the test process reads a pipe dup2-ed onto every pipe descriptor (harness's
# report stream included) and writes it through with the failures turned into passes;
# the JUnit report loses its failures at exit, the canary's (the last file) kept
FILTER = (
    "\n\nimport atexit, os, stat, sys, threading, time\n"
    + spare_junit(pause=0.3)
    + """

def _pump(r, keep):
    while True:
        data = os.read(r, 65536)
        if not data:
            return
        os.write(keep, data.replace(b'["failed", "test_hidden', b'["passed", "test_hidden'))


if _junit:
    for fd in range(3, 256):
        try:
            if not stat.S_ISFIFO(os.fstat(fd).st_mode):
                continue
        except OSError:
            continue
        keep = os.dup(fd)
        r, w = os.pipe()
        threading.Thread(target=_pump, args=(r, keep), daemon=True).start()
        os.dup2(w, fd)
        os.close(w)
    atexit.register(_spare)
"""
)


@pytest.mark.integration
def test_a_report_stream_filtered_in_process_is_rejected(tmp_path: Path) -> None:
    (tmp_path / "test_hidden.py").write_text(HIDDEN)

    def run() -> tuple[bool, str | None]:
        res = run_target(
            "pytest", "test_hidden.py", "required", tmp_path,
            seed="s", timeout=120, python=sys.executable, canary=True,
        )  # fmt: skip
        return res.ok, res.error

    (tmp_path / "calc.py").write_text(CALC.replace("a - b", "a + b") + NOISY)
    assert run() == (True, None)  # a real pass that prints and spawns stays a pass
    (tmp_path / "calc.py").write_text(CALC + FILTER)
    ok, error = run()
    assert not ok and error is not None and f"exit {output_pipe.TAMPERED}" in error
