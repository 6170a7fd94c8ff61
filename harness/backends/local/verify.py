"""Verification on the host: a temporary copy of the workspace, then ``verify_tree``."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from harness.util.fs import copytree
from harness.verify.engine import verify_tree
from harness.verify.outcome import VerifyOutcome
from harness.verify.request import VerifyRequest


def verify_local(workspace: Path, request: VerifyRequest) -> VerifyOutcome:
    """Grade a copy of ``workspace``; the workspace itself is never touched."""
    tmp = Path(tempfile.mkdtemp(prefix="harness-verify-"))
    try:
        tree = tmp / "tree"
        copytree(workspace, tree)
        return verify_tree(tree, request)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
