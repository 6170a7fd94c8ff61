"""Put the host's harness source into a running sandbox instead of baking it into images.

Scorer and gateway images hold only third-party dependencies; the verifier must run the
very harness code the host runs, so the package is copied in at start (a few hundred KB,
milliseconds) and run with ``PYTHONPATH=/opt/harness``. Editing harness therefore never
forces an image rebuild.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import harness
from harness.sandbox.base import Sandbox
from harness.sandbox.local import LocalSandbox

HARNESS_PYTHONPATH = "/opt/harness"


def inject_harness_source(sandbox: Sandbox) -> str:
    """Copy the host's ``harness`` package to ``/opt/harness/harness``; return PYTHONPATH.

    Set the returned value as ``PYTHONPATH`` for commands that import harness. For a
    local sandbox nothing is copied and the host's own source folder is returned.
    """
    package = Path(harness.__file__).resolve().parent
    if isinstance(sandbox, LocalSandbox):
        return str(package.parent)
    with tempfile.TemporaryDirectory(prefix="harness-src-") as tmp:
        copy = Path(tmp) / "harness"
        shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        sandbox.copy_in(copy, f"{HARNESS_PYTHONPATH}/harness")
    return HARNESS_PYTHONPATH
