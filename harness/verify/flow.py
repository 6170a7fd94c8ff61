"""Verify one tree: modification rules, hidden files, test targets, suite, outcome.

This runs wherever the verifier runs: on the host for ``--sandbox local``, inside the
network-less scorer container for Docker (``python -m harness.verify.inside``). The tree
is always a *copy* of the agent's workspace; hidden files are copied into it here.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from harness.errors import UserError
from harness.provision.toolchain import expand
from harness.util.deeptree import remove_tree
from harness.util.fs import copy_destinations, copy_pairs, hidden_paths, link_on_the_way
from harness.util.git import changed_files, git
from harness.verify import reviewflags
from harness.verify.guard import TestGuard, test_user_for
from harness.verify.isolation.test_user import hand_over
from harness.verify.outcome import Kind, TargetResult, VerifyOutcome
from harness.verify.request import VerifyRequest
from harness.verify.rules import check_rules
from harness.verify.runners import run_target
from harness.verify.scoring_bridge import attach_score
from harness.verify.verdict import decide
from harness.verify.walls import Walls


def copy_hidden(request: VerifyRequest, tree: Path, *, refuse_links: bool = False) -> list[str]:
    """Copy ``verify.copy`` sources into the tree (overwriting: hidden tests rule).

    ``refuse_links``: the tree is an agent's workspace on the host (``verify
    --copy-only``), so a symbolic link on the way to any destination raises
    ``ValueError`` before anything is written (nothing is written through a link).
    """
    written: list[str] = []
    root = Path(request.hidden_root)
    tree = tree.resolve() if refuse_links else tree
    plan: list[tuple[Path, Path]] = []
    for step in request.copy_:
        if refuse_links:
            _no_link(tree, tree / step.to)
        plan += copy_destinations(root / step.from_, step.to, tree)
    if request.tests_from_root:
        plan += [
            (s, tree / r)
            for s, r in hidden_paths(Path(request.tests_from_root), request.tests_from)
        ]
    for _, dest in plan if refuse_links else ():
        _no_link(tree, dest)
    for src, dest in plan:
        copy_pairs([(src, dest)])
        written.append(dest.relative_to(tree).as_posix())
    return written


def copy_hidden_into(request: VerifyRequest, workspace: Path) -> list[str]:
    """``verify --copy-only``: the hidden files into an agent's workspace, never through
    a link it holds (a clean one-line error instead, nothing written)."""
    try:
        return copy_hidden(request, workspace, refuse_links=True)
    except ValueError as exc:
        raise UserError(
            f"cannot copy the hidden files: {exc}",
            file=workspace,
            field="verify.copy",
            fix="remove the link from the workspace, or run `harness setup` again",
        ) from None


def _no_link(tree: Path, dest: Path) -> None:
    link = link_on_the_way(tree, dest)
    if link is not None:
        raise ValueError(
            f"'{link.relative_to(tree).as_posix()}' in the workspace is a symbolic link: "
            "hidden files are never written through a link"
        )


def partial_fraction(targets: list[TargetResult]) -> float | None:
    partial = [t for t in targets if t.kind == "partial"]
    if not partial:
        return None
    total = sum(t.ran[1] for t in partial)  # goagentbench: test events only, not builds
    return (sum(t.ran[0] for t in partial) / total) if total else 0.0


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
        request.rules_dialect,
    )
    # broken rules decide the verdict (not for validate --deep: it grades no change)
    rules_ok = all(r.ok for r in rules) or request.compile_only
    if request.copy_only:  # an author's look at the hidden files: nothing runs
        hidden = copy_hidden(request, tree)
        guard = None
    else:
        guard = TestGuard(tree, request, lambda: copy_hidden(request, tree))
        hidden = guard.prepare()
    targets: list[TargetResult] = []
    if request.provision_error and not request.copy_only:
        env = f"environment error: {request.provision_error}"
        return VerifyOutcome(
            success=False,
            partial_score=None,
            rules=rules,
            targets=[],
            changed_files=changed,
            hidden_files=hidden,
            duration_s=time.monotonic() - start,
            # the broken rules decided already: the environment is a note, not the verdict
            error=env if rules_ok else None,
            toolchain=request.toolchain if rules_ok else noted(request.toolchain, env),
        )
    walls = None
    if not request.copy_only:
        per_target = max(
            30.0, request.timeout_s / max(1, len(request.tests) + len(request.partial_tests))
        )
        kinds: tuple[tuple[Kind, list[str]], ...] = (
            ("required", request.tests),
            ("partial", request.partial_tests),
        )
        assert guard is not None

        def run(target: str, kind: str, where: Path) -> TargetResult:
            return run_target(
                request.runner,
                compile_form(request.runner, target) if request.compile_only else target,
                "partial" if kind == "partial" else "required",
                where,
                seed=request.seed,
                timeout=per_target,
                python=request.python,
                extra_env=request.env,
                user=guard.user,
                canary=not request.compile_only,
                agent_files=(changed, hidden) if where == tree else ((), hidden),
                twin=request.walls and not request.compile_only,
            ).model_copy(update={"target": target})

        if not request.compile_only and request.walls:  # the reference first: none of the
            # agent's code ran yet
            walls = Walls(tree, request, guard.uid, guard.hidden)
            walls.measure(
                [(t, k) for k, entries in kinds for t in entries],
                run,
                lambda where: copy_hidden(request, where),
            )
        first = True
        try:
            for kind, entries in kinds:
                for target in entries:
                    if not first:  # an earlier target's code may have changed the tree
                        guard.prepare()
                    first = False
                    checked = guard.check(run(target, kind, tree))
                    targets.append(walls.judge(checked, run) if walls else checked)
        finally:
            if walls is not None:
                walls.close()
        guard.finish()
    partial = partial_fraction(targets)
    if partial is not None and not rules_ok:
        partial = 0.0  # goagentbench runs no tests at all then
    env_error = None
    if not request.compile_only:
        env_error = confirm_env_error(tree, request, targets)
    toolchain = toolchain_ran(request, tree)
    if env_error and not rules_ok:  # broken rules decided already: no check overrules them
        toolchain = noted(toolchain, env_error)
        env_error = None
    outcome = VerifyOutcome(
        success=False,  # decided below, once (verify/verdict.py)
        review_flags=reviewflags.scan(tree, changed, hidden),
        partial_score=partial,
        rules=rules,
        targets=targets,
        changed_files=changed,
        hidden_files=hidden,
        duration_s=time.monotonic() - start,
        error=env_error,
        toolchain=toolchain,
        **(guard.fields(walls.forged if walls else []) if guard else {}),  # type: ignore[arg-type]
    )
    if request.compile_only:
        return outcome.model_copy(update={"success": decide(outcome).success})
    return attach_score(outcome, request, tree)


def noted(toolchain: dict[str, Any], note: str) -> dict[str, Any]:
    """``toolchain`` with one more note (what the verdict did not turn on)."""
    return {**toolchain, "notes": [*toolchain.get("notes", []), note]}


def compile_form(runner: str, target: str) -> str:
    """The target as a build-only command: ``go test -run '^$'``, ``pytest --collect-only``."""
    if runner == "go":
        return f"{target.split(' -run')[0]} -run ^$"
    return f"{target} --collect-only"


def confirm_env_error(
    tree: Path, request: VerifyRequest, targets: list[TargetResult]
) -> str | None:
    """An environment failure (toolchain, dependency) that the baseline tree, with the
    same hidden files, also has; None when every failure is the change's own."""
    suspect = next((t for t in targets if not t.all_passed and t.env_error), None)
    if suspect is None:
        return None

    tmp = Path(tempfile.mkdtemp(prefix="harness-baseline-"))
    try:
        base = tmp / "tree"
        git(["clone", "-q", "--shared", "--no-checkout", str(tree), str(base)], tmp)
        git(["checkout", "-q", request.baseline], base)
        copy_hidden(request, base)
        user = test_user_for(request)
        hand_over(base, user.uid if user else None, [])
        again = run_target(
            request.runner,
            suspect.target,
            suspect.kind,
            base,
            seed=request.seed,
            timeout=max(60.0, request.timeout_s / 2),
            python=request.python,
            extra_env=request.env,
            user=user,
        )
    finally:
        remove_tree(tmp)
    if again.env_error is None:
        suspect.error = (suspect.error or "failed") + " (the baseline builds: the change caused it)"
        return None
    return f"environment error, the baseline fails the same way: {suspect.env_error}"


def toolchain_ran(request: VerifyRequest, tree: Path) -> dict[str, Any]:
    """The toolchain that actually ran (``go version`` / the Python's version)."""

    env = {**os.environ}
    env.update(expand(request.env, env))
    cmd = ["go", "env", "GOVERSION"] if request.runner == "go" else [request.python, "--version"]
    try:
        out = subprocess.run(
            cmd, cwd="/", env=env, capture_output=True, text=True, timeout=60, check=False
        )
        ran = (out.stdout or out.stderr).strip().splitlines()[0] if out.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, IndexError):
        ran = None
    return {**request.toolchain, "ran": ran}
