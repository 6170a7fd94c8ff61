"""The run is told which pipe harness reads; a status that says it was taken over is a rejection."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harness.verify import outputpipe
from harness.verify.testuser import run_reaped


def test_only_the_tampered_status_is_a_rejection() -> None:
    assert outputpipe.rejection(outputpipe.TAMPERED) is not None
    assert outputpipe.rejection(0) is outputpipe.rejection(1) is outputpipe.rejection(None) is None


SHOW = "import os; print(os.environ[{env!r}], os.readlink('/proc/self/fd/1'))"


@pytest.mark.integration
def test_the_run_is_told_which_pipe_harness_reads(tmp_path: Path) -> None:
    cmd = [sys.executable, "-c", SHOW.format(env=outputpipe.ENV)]
    ran = run_reaped(cmd, tmp_path, {}, 60, None)
    named, seen = ran.output.split()
    assert ran.returncode == 0 and named == seen and named.startswith("pipe:[")
