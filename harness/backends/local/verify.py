"""Verification on the host: a temporary copy of the workspace, then ``verify_tree``."""

from __future__ import annotations

import tempfile
from pathlib import Path

from harness.util import trialgit
from harness.util.agentfiles import OverCap, copy_tree
from harness.util.deeptree import remove_tree
from harness.verify.flow import verify_tree
from harness.verify.outcome import VerifyOutcome
from harness.verify.request import VerifyRequest


def stage_tree(workspace: Path, tree: Path, max_bytes: int | None) -> dict[str, str]:
    """The tree a verifier grades: the workspace's files as data (``agentfiles``) and,
    as its ``.git``, a copy of harness's own git dir (never the agent's). Returns what
    was left out; raises ``OverCap`` when the workspace is over its caps."""
    copied = copy_tree(workspace, tree, max_bytes=max_bytes, skip_top=frozenset({".git"}))
    trialgit.copy_git(workspace, tree / ".git")
    return copied.skipped


def refused(exc: OverCap) -> VerifyOutcome:
    """Not graded because of what the agent left: ``failed``, with the reason."""
    return VerifyOutcome.ungraded(report_text=f"verification refused: {exc}\n")


def skipped_note(skipped: dict[str, str]) -> str:
    """Lines for the report naming what the verifier's copy left out."""
    if not skipped:
        return ""
    lines = [f"  {path}: {why}" for path, why in sorted(skipped.items())[:50]]
    more = len(skipped) - len(lines)
    tail = [f"  ... and {more} more"] if more > 0 else []
    return "left out of the verified copy:\n" + "\n".join([*lines, *tail]) + "\n"


def with_note(outcome: VerifyOutcome, skipped: dict[str, str]) -> VerifyOutcome:
    note = skipped_note(skipped)
    if not note:
        return outcome
    return outcome.model_copy(update={"report_text": note + outcome.report_text})


def verify_local(
    workspace: Path, request: VerifyRequest, max_bytes: int | None = None
) -> VerifyOutcome:
    """Grade a copy of ``workspace``; the workspace itself is never touched."""
    tmp = Path(tempfile.mkdtemp(prefix="harness-verify-"))
    try:
        tree = tmp / "tree"
        try:
            skipped = stage_tree(workspace, tree, max_bytes)
        except OverCap as exc:
            return refused(exc)
        return with_note(verify_tree(tree, request), skipped)
    finally:
        remove_tree(tmp)
