"""Another process holding a workspace's lock (``harness.trial.workspace_lock``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO_ROOT

HOLDER = """
import sys, time
from pathlib import Path
from harness.trial.workspace_lock import holding
with holding(Path(sys.argv[1])):
    print("held", flush=True)
    time.sleep(600)
"""


def hold_workspace(workspace: Path) -> subprocess.Popen[str]:
    """A process that holds ``workspace`` until killed (the caller kills and waits for it)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(workspace)],
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc
