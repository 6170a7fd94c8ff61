"""Verify one tree: modification rules, hidden files, test targets, suite, outcome.

This runs wherever the verifier runs: on the host for ``--sandbox local``, inside the
network-less scorer container for Docker (``python -m harness.verify.inside``). The tree
is always a *copy* of the agent's workspace; hidden files are copied into it here.
"""

from __future__ import annotations

import time
from pathlib import Path

from harness.fsutil import copy_destinations, copy_pairs
from harness.gitutil import changed_files
from harness.verify.request import VerifyRequest
from harness.verify.results import TargetResult, VerifyOutcome
from harness.verify.rules import check_rules
from harness.verify.runners import Kind, run_target
from harness.verify.scoring_bridge import attach_score


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
        kinds: tuple[tuple[Kind, list[str]], ...] = (
            ("required", request.tests),
            ("partial", request.partial_tests),
        )
        for kind, entries in kinds:
            for target in entries:
                targets.append(
                    run_target(
                        request.runner,
                        target,
                        kind,
                        tree,
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
    outcome = VerifyOutcome(
        success=False,  # decided once the score is attached
        partial_score=partial,
        rules=rules,
        targets=targets,
        changed_files=changed,
        hidden_files=hidden,
        duration_s=time.monotonic() - start,
    )
    return attach_score(outcome, request, tree)
