"""Verify one tree: modification rules, hidden files, test targets, suite, outcome.

This runs wherever the verifier runs: on the host for ``--sandbox local``, inside the
network-less scorer container for Docker (``python -m harness.verify.inside``). The tree
is always a *copy* of the agent's workspace; hidden files are copied into it here.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

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
    compile_only: bool = False  # validate --deep: build the tests, run none
    env: dict[str, str] = Field(default_factory=dict)  # toolchain + dependency variables
    docker_env: dict[str, str] = Field(default_factory=dict)  # the same, paths inside
    mounts: dict[str, str] = Field(default_factory=dict)  # host folder -> inside, read-only
    provision_error: str | None = None  # preparing the toolchain or dependencies failed
    toolchain: dict[str, Any] = Field(default_factory=dict)  # what the host chose, and why

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
    )
    hidden = copy_hidden(request, tree)
    targets: list[TargetResult] = []
    if request.provision_error and not request.copy_only:
        return VerifyOutcome(
            success=False,
            partial_score=None,
            rules=rules,
            targets=[],
            changed_files=changed,
            hidden_files=hidden,
            duration_s=time.monotonic() - start,
            error=f"environment error: {request.provision_error}",
            toolchain=request.toolchain,
        )
    if not request.copy_only:
        per_target = max(
            30.0, request.timeout_s / max(1, len(request.tests) + len(request.partial_tests))
        )
        for kind, entries in (("required", request.tests), ("partial", request.partial_tests)):
            for target in entries:
                targets.append(
                    run_target(
                        request.runner,
                        compile_form(request.runner, target) if request.compile_only else target,
                        kind,  # type: ignore[arg-type]
                        tree,
                        seed=request.seed,
                        timeout=per_target,
                        python=request.python,
                        extra_env=request.env,
                    ).model_copy(update={"target": target})
                )
    rules_ok = all(r.ok for r in rules)
    required_ok = all(t.all_passed for t in targets if t.kind == "required")
    partial = partial_fraction(targets)
    if partial is not None and not rules_ok:
        partial = 0.0  # goagentbench runs no tests at all then
    success = rules_ok and required_ok and (partial is None or partial == 1.0)
    success = success and (bool(targets) or request.suite_dir is not None)
    env_error = None
    if not request.compile_only:
        env_error = confirm_env_error(tree, request, targets)
    outcome = VerifyOutcome(
        success=success and env_error is None,
        partial_score=partial,
        rules=rules,
        targets=targets,
        changed_files=changed,
        hidden_files=hidden,
        duration_s=time.monotonic() - start,
        error=env_error,
        toolchain=toolchain_ran(request, tree),
    )
    if request.compile_only:
        return outcome
    from harness.verify.scoring_bridge import attach_score

    return attach_score(outcome, request, tree)


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
    import shutil
    import tempfile

    from harness.gitutil import git

    tmp = Path(tempfile.mkdtemp(prefix="harness-baseline-"))
    try:
        base = tmp / "tree"
        git(["clone", "-q", "--shared", "--no-checkout", str(tree), str(base)], tmp)
        git(["checkout", "-q", request.baseline], base)
        copy_hidden(request, base)
        again = run_target(
            request.runner,
            suspect.target,
            suspect.kind,
            base,
            seed=request.seed,
            timeout=max(60.0, request.timeout_s / 2),
            python=request.python,
            extra_env=request.env,
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if again.env_error is None:
        suspect.error = (suspect.error or "failed") + " (the baseline builds: the change caused it)"
        return None
    return f"environment error, the baseline fails the same way: {suspect.env_error}"


def toolchain_ran(request: VerifyRequest, tree: Path) -> dict[str, Any]:
    """The toolchain that actually ran (``go version`` / the Python's version)."""
    import os
    import subprocess

    from harness.toolchain import expand

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
