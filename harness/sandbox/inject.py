"""Put the host's harness source into a sandbox instead of baking it into images.

Scorer and gateway images hold only third-party dependencies; the verifier must run the
very harness code the host runs. ``harness_source_mount`` bind-mounts the host's package
read-only at ``/opt/harness/harness`` (given at start: no copy, and the package's
``__pycache__`` is used where the interpreters match); ``inject_harness_source`` copies
it into a sandbox already running. Either way commands run with
``PYTHONPATH=/opt/harness``, and editing harness never forces an image rebuild.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import harness
from harness.sandbox.base import Sandbox
from harness.sandbox.local import LocalSandbox

HARNESS_PYTHONPATH = "/opt/harness"


def harness_package() -> Path:
    """The host's ``harness`` package folder."""
    return Path(harness.__file__).resolve().parent


def harness_source_mount() -> dict[str, str]:
    """``SandboxSpec.mounts`` entry: the host's package, read-only, under PYTHONPATH.

    A Docker sandbox's ``/opt/harness`` is a root-owned tmpfs of its own (the verifier
    closes it to the users the tests and apps run as); the package is mounted inside it.
    """
    return {str(harness_package()): f"{HARNESS_PYTHONPATH}/harness:ro"}


def inject_harness_source(sandbox: Sandbox) -> str:
    """Copy the host's ``harness`` package to ``/opt/harness/harness``; return PYTHONPATH.

    Set the returned value as ``PYTHONPATH`` for commands that import harness. For a
    local sandbox nothing is copied and the host's own source folder is returned.
    """
    package = harness_package()
    if isinstance(sandbox, LocalSandbox):
        return str(package.parent)
    with tempfile.TemporaryDirectory(prefix="harness-src-") as tmp:
        copy = Path(tmp) / "harness"
        shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        sandbox.copy_in(copy, f"{HARNESS_PYTHONPATH}/harness")
    return HARNESS_PYTHONPATH
