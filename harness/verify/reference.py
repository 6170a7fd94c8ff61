"""The reference's outcome, per test, measured by the verifier before the agent's code runs.

Per trial, in the verifier: the baseline is checked out from harness's own git copy in the
tree (never the agent's ``.git``), the scenario's solution (a patch or a folder) applied,
the hidden tests copied, and every target run as the candidate's will be (same runner,
user, canary, seed). What passed there is what the candidate must pass
(``verify.parity``); what the negative twins' run fails there is what a candidate's pass
of a twin proves forged (``verify.twin``). It runs before any target of the candidate, so
nothing of the agent's code has run in this verifier yet.

Why per trial rather than a stored file: it needs no state that outlives a trial (a
stored reference outcome would be one more file an agent of an earlier trial could
reach), it holds in whatever environment the trial verifies in (toolchain, image), and it
costs one run of the hidden targets (seconds for the shipped scenarios).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, Field

from harness.errors import InfraError
from harness.util.deeptree import remove_tree
from harness.util.fs import copy_destinations, copy_pairs
from harness.util.git import GitError, git
from harness.verify.isolation.test_user import hand_over
from harness.verify.outcome import TargetResult
from harness.verify.parity import passed_names
from harness.verify.request import VerifyRequest

# (target, kind, tree) -> the target's result on that tree
RunOne = Callable[[str, str, Path], TargetResult]
# (tree) -> the hidden files written into it (tree-relative)
CopyHidden = Callable[[Path], list[str]]


class Reference(BaseModel):
    """What the reference tree passed, per target."""

    passed: dict[str, list[str]] = Field(default_factory=dict)  # target -> names passed
    twin_failed: dict[str, list[str]] = Field(default_factory=dict)  # target -> twin names failed
    note: str = ""  # how it was measured, or why it could not be

    def expected(self, target: str) -> frozenset[str] | None:
        names = self.passed.get(target)
        return frozenset(names) if names is not None else None


def build_tree(tree: Path, request: VerifyRequest, dest: Path, copy_hidden: CopyHidden) -> None:
    """``dest``: the baseline (from the tree's harness-owned ``.git``), the solution, the
    hidden tests. A solution that does not apply is the scenario's fault, not the agent's
    (``InfraError``: the trial is ``error``)."""
    git(["clone", "-q", "--shared", "--no-checkout", str(tree), str(dest)], dest.parent)
    git(["checkout", "-q", request.baseline], dest)
    solution = Path(request.solution_file or "")
    if solution.is_dir():
        copy_pairs(copy_destinations(solution, ".", dest))
    elif solution.is_file():
        try:
            git(["apply", "--whitespace=nowarn", str(solution)], dest)
        except GitError as exc:
            last = exc.stderr.splitlines()[-1] if exc.stderr else "git apply failed"
            raise InfraError(
                f"the reference solution does not apply to the baseline: {last}"
            ) from None
    else:
        raise InfraError(f"the reference solution is missing: {solution}")
    copy_hidden(dest)


def measure(
    tree: Path,
    request: VerifyRequest,
    targets: list[tuple[str, str]],
    run_one: RunOne,
    copy_hidden: CopyHidden,
    uid: int | None,
    twins: Callable[[Path], bool] | None = None,
) -> Reference:
    """Run ``targets`` ((target, kind) pairs) on the reference tree; with ``twins`` (writes
    the negative twins into a tree, True when it wrote any), run them again on the twins
    and record which names fail there."""
    if not targets:
        return Reference()
    if not request.solution_file:
        return Reference(note="no reference solution: only the nothing-passed rule holds")
    tmp = Path(tempfile.mkdtemp(prefix="harness-reference-"))
    try:
        base = tmp / "tree"
        build_tree(tree, request, base, copy_hidden)
        hidden = [base / h for h in request_hidden(request, base)]
        hand_over(base, uid, hidden)
        passed: dict[str, list[str]] = {}
        for target, kind in targets:
            ran = run_one(target, kind, base)
            if kind == "required" and not ran.all_passed:
                raise InfraError(reference_failure(target, ran))
            passed[target] = sorted(passed_names(ran))
        twin_failed: dict[str, list[str]] = {}
        if twins is not None and twins(base):
            hand_over(base, uid, hidden)
            for target, kind in targets:
                ran = run_one(target, kind, base)
                twin_failed[target] = sorted(
                    c.name for c in ran.tests if not c.passed and not c.synthetic
                )
        return Reference(
            passed=passed,
            twin_failed=twin_failed,
            note="measured on the reference solution in this verifier, before the agent's code ran",
        )
    finally:
        remove_tree(tmp)


def reference_failure(target: str, ran: TargetResult) -> str:
    """Why a verdict cannot be given: the reference itself fails a required target here
    (a toolchain, a permission, a timeout of this verifier), so whatever the candidate
    earns there would charge the agent for the environment."""
    failing = [c for c in ran.tests if not c.passed]
    why = ran.env_error or ran.error or (failing[0].error if failing else None) or "failed"
    detail = " ".join(f"{why}: {failing[0].output}".split()) if failing else why
    return (
        f"the reference solution fails required target {target} in this verifier "
        f"({detail[:300]}): the environment, not the agent's code"
    )


def request_hidden(request: VerifyRequest, tree: Path) -> list[str]:
    """The hidden files' places in ``tree`` (tree-relative)."""
    root = Path(request.hidden_root)
    out: list[str] = []
    for step in request.copy_:
        try:
            pairs = copy_destinations(root / step.from_, step.to, tree)
        except ValueError:
            continue
        out += [d.relative_to(tree.resolve()).as_posix() for _, d in pairs]
    return out
