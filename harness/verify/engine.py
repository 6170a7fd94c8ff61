"""Verify one tree: modification rules, hidden files, test targets, suite, outcome.

This runs wherever the verifier runs: on the host for ``--sandbox local``, inside the
network-less scorer container for Docker (``python -m harness.verify.inside``). The tree
is always a *copy* of the agent's workspace; hidden files are copied into it here.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from pydantic import BaseModel, Field

from harness.fsutil import copy_destinations, copy_pairs
from harness.gitutil import changed_files
from harness.verify.results import TargetResult, VerifyOutcome
from harness.verify.rules import check_rules
from harness.verify.runners import run_target


class HiddenCopy(BaseModel):
    from_: str = Field(alias="from")
    to: str

    model_config = {"populate_by_name": True}


class VerifyRequest(BaseModel):
    """Everything the verifier needs, serialisable so it can cross into a container."""

    scenario: str
    baseline: str
    seed: str
    runner: str
    must_modify: list[str] = Field(default_factory=list)
    no_modify: list[str] = Field(default_factory=list)
    only_modify: list[str] = Field(default_factory=list)
    tests: list[str] = Field(default_factory=list)
    partial_tests: list[str] = Field(default_factory=list)
    copy_: list[HiddenCopy] = Field(default_factory=list, alias="copy")
    hidden_root: str
    suite_dir: str | None = None
    evidence_dir: str | None = None
    python: str = Field(default_factory=lambda: sys.executable)
    timeout_s: float = 600.0
    copy_only: bool = False

    model_config = {"populate_by_name": True}


def copy_hidden(request: VerifyRequest, tree: Path) -> list[str]:
    """Copy ``verify.copy`` sources into the tree (overwriting: hidden tests rule)."""
    written: list[str] = []
    root = Path(request.hidden_root)
    for step in request.copy_:
        pairs = copy_destinations(root / step.from_, step.to, tree)
        copy_pairs(pairs)
        written += [d.relative_to(tree).as_posix() for _, d in pairs]
    return written


def partial_fraction(targets: list[TargetResult]) -> float | None:
    partial = [t for t in targets if t.kind == "partial"]
    if not partial:
        return None
    total = sum(t.total for t in partial)
    return (sum(t.passed for t in partial) / total) if total else 0.0


def verify_tree(tree: Path, request: VerifyRequest) -> VerifyOutcome:
    """Grade ``tree`` (a copy of the post-agent workspace) against ``request``."""
    start = time.monotonic()
    changed = changed_files(tree, request.baseline)
    rules = check_rules(
        changed,
        request.must_modify,
        request.no_modify,
        request.only_modify,
        lambda entry: (tree / entry).is_dir(),
    )
    hidden = copy_hidden(request, tree)
    targets: list[TargetResult] = []
    if not request.copy_only:
        per_target = max(
            30.0, request.timeout_s / max(1, len(request.tests) + len(request.partial_tests))
        )
        for kind, entries in (("required", request.tests), ("partial", request.partial_tests)):
            for target in entries:
                targets.append(
                    run_target(
                        request.runner,
                        target,
                        kind,
                        tree,  # type: ignore[arg-type]
                        seed=request.seed,
                        timeout=per_target,
                        python=request.python,
                    )
                )
    rules_ok = all(r.ok for r in rules)
    required_ok = all(t.all_passed for t in targets if t.kind == "required")
    partial = partial_fraction(targets)
    if partial is not None and not (rules_ok and required_ok):
        partial = 0.0
    success = rules_ok and required_ok and (partial is None or partial == 1.0)
    success = success and (bool(targets) or request.suite_dir is not None)
    outcome = VerifyOutcome(
        success=success,
        partial_score=partial,
        rules=rules,
        targets=targets,
        changed_files=changed,
        hidden_files=hidden,
        duration_s=time.monotonic() - start,
    )
    from harness.verify.scoring_bridge import attach_score

    return attach_score(outcome, request, tree)
