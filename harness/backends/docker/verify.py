"""Verification in a fresh, network-less scorer container.

The host stages a copy of the post-agent workspace, the hidden sources named by
``verify.copy`` and the suite in a private temporary folder; the container gets it as a
read-only mount inside its root-only ``/opt/harness`` (beside the harness package, also
mounted read-only) and the verifier copies it into its own ``/verify`` tmpfs before
anything of the tree runs. No archive is copied in; only ``/verify/out`` comes back. The
agent's container is gone by now and cannot influence anything but the workspace files.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
from pathlib import Path

from harness.backends.docker.goseed import ensure_seed
from harness.backends.local.verify import refused, stage_tree, with_note
from harness.errors import InfraError, UserError
from harness.images import ensure_image
from harness.sandbox.base import SandboxSpec
from harness.sandbox.docker import SANDBOX_UID, DockerSandbox
from harness.sandbox.inject import HARNESS_PYTHONPATH, harness_source_mount
from harness.scenario.policy import DEFAULT_POLICY, SandboxPolicy
from harness.util.agentfiles import OverCap, copy_tree
from harness.util.deeptree import remove_tree
from harness.util.fs import copytree, hidden_paths, write_atomic
from harness.verify.outcome import VerifyOutcome
from harness.verify.request import VerifyRequest

ROOT = "/verify"
STAGE = f"{HARNESS_PYTHONPATH}/stage"  # the staged copy, mounted read-only


def stage(
    workspace: Path, request: VerifyRequest, staging: Path, max_bytes: int | None = None
) -> tuple[VerifyRequest, dict[str, str]]:
    """Lay out tree/, hidden/, suite/ and request.json; return the inner request and
    what the tree copy left out (``OverCap`` when the workspace is over its caps)."""
    skipped = stage_tree(workspace, staging / "tree", max_bytes)
    hidden_root = Path(request.hidden_root)
    for step in request.copy_:
        src = hidden_root / step.from_
        dest = staging / "hidden" / step.from_
        dest.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            copytree(src, dest)
        else:
            shutil.copy2(src, dest)
    (staging / "hidden").mkdir(exist_ok=True)
    if request.tests_from_root:  # the fix commit's test files (verify.tests-from)
        for src, rel in hidden_paths(Path(request.tests_from_root), request.tests_from):
            dest = staging / "tests-from" / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest)
    solution = None
    if request.solution_file:  # the reference the verifier measures first (verify.reference)
        src = Path(request.solution_file)
        solution = staging / "solution" / src.name
        solution.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            copytree(src, solution)
        else:
            shutil.copy2(src, solution)
    inner = request.model_copy(
        update={
            "hidden_root": f"{ROOT}/hidden",
            "tests_from_root": f"{ROOT}/tests-from" if request.tests_from_root else None,
            "python": "python3",
            "evidence_dir": f"{ROOT}/out/evidence",
            "suite_dir": f"{ROOT}/suite" if request.suite_dir else None,
            "spec_file": f"{ROOT}/{Path(request.spec_file).name}" if request.spec_file else None,
            "solution_file": f"{ROOT}/solution/{solution.name}" if solution else None,
            "env": request.docker_env,  # toolchain/dependency paths as mounted inside
            "mounts": {},
            "test_uid": SANDBOX_UID,  # the tests' own user; the verifier runs as root
            "test_reads_all": False,
        }
    )
    if request.suite_dir:
        copytree(Path(request.suite_dir), staging / "suite")
    if request.spec_file:  # beside suite/, where a suite's ``spec=HERE.parent / "SPEC.md"`` looks
        shutil.copy2(request.spec_file, staging / Path(request.spec_file).name)
    write_atomic(staging / "request.json", inner.model_dump_json(by_alias=True))
    return inner, skipped


def _stopped_by(limit: str, detail: str) -> VerifyOutcome:
    """A failed, ungraded outcome: the code under test ran into a sandbox limit."""
    return VerifyOutcome.ungraded(
        report_text=f"verification stopped by limit: {limit} ({detail})\n"
    )


# What the scorer itself needs to run the hidden tests and an executed app as users of
# their own (harness.verify.isolation.test_user, harness.appkit.jail): switching user
# (SETUID, SETGID), handing them the tree and closing the evidence (CHOWN, FOWNER,
# DAC_OVERRIDE), and killing every process they leave (KILL).
APP_SCORER_CAPS = ("SETUID", "SETGID", "CHOWN", "FOWNER", "DAC_OVERRIDE", "KILL")


def scorer_policy(policy: SandboxPolicy, *, executes_app: bool = True) -> SandboxPolicy:
    """The verifier's policy: the scenario's, plus the few capabilities (and so root) the
    scorer needs to run the tests and the built app as unprivileged users of their own,
    apart from the outcome it writes. Neither ever holds them; no-new-privileges, the
    read-only root and the limits stay. (``executes_app`` is kept for callers: every
    verification now runs code under test as another user.)"""
    caps = sorted(set(policy.capabilities) | set(APP_SCORER_CAPS))
    return policy.model_copy(update={"capabilities": caps})


def verifier_spec(
    image: str,
    request: VerifyRequest,
    staged: Path,
    labels: dict[str, str],
    policy: SandboxPolicy,
    cpus: float | None = None,
    memory: str | None = None,
) -> SandboxSpec:
    """The scorer container: network-less, ``/verify`` a tmpfs capped at twice the
    workspace size; the staged folder (tree, hidden files, suite, request) and the harness
    source reach it as read-only mounts inside its root-only ``/opt/harness`` (the
    verifier copies the stage into ``/verify`` itself), so no archive is copied in."""
    mounts = dict(request.mounts)  # the scenario's toolchain and dependencies, read-only
    mounts.update(harness_source_mount())
    mounts[str(staged)] = f"{STAGE}:ro"
    return SandboxSpec(
        phase="verify",
        image=image,
        workspace=None,
        mount_workspace=False,
        project_dir=f"{ROOT}/tree",
        network="none",
        cpus=cpus,
        memory=memory,
        labels=labels,
        mounts=mounts,
        policy=policy,
        scratch={ROOT: str(2 * policy.bytes("workspace_size"))},  # tree, hidden, builds
    )


def verify_in_docker(
    workspace: Path,
    request: VerifyRequest,
    *,
    labels: dict[str, str],
    cpus: float | None = None,
    memory: str | None = None,
    evidence_dest: Path | None = None,
    policy: SandboxPolicy = DEFAULT_POLICY,
) -> tuple[VerifyOutcome, str]:
    """Grade a copy of ``workspace`` in the scorer image; returns (outcome, image id).

    The container is hardened like the agent's (``policy``): no capabilities, non-root,
    read-only root; ``/verify`` is a tmpfs capped at twice the policy's workspace size
    (``verifier_spec``).
    """
    ref = ensure_image("scorer")
    # the reference's runs (verify.reference) and the twins' (verify.walls) come on top
    runs = 1 + (1 + (2 if request.runner != "go" else 0) if request.solution_file else 0)
    limit = request.timeout_s * runs + 120
    policy = scorer_policy(policy, executes_app=request.suite_dir is not None)
    if request.runner == "go" and not request.copy_only:  # the read-only Go seed first
        ensure_seed(ref.tag, ref.id, request, policy, labels)
    tmp = Path(tempfile.mkdtemp(prefix="harness-verify-"))
    spec = verifier_spec(ref.tag, request, tmp / "stage", labels, policy, cpus, memory)
    sandbox = DockerSandbox(spec, create_project=False)
    try:
        try:
            _, skipped = stage(workspace, request, tmp / "stage", policy.bytes("workspace_size"))
        except OverCap as exc:
            return refused(exc), ref.id
        sandbox.start()
        result = sandbox.exec(
            [
                "python3",
                "-m",
                "harness.verify.inside",
                "--stage",
                STAGE,
                f"{ROOT}/request.json",
                f"{ROOT}/tree",
                f"{ROOT}/out",
            ],
            cwd=ROOT,
            env={"PYTHONPATH": HARNESS_PYTHONPATH, "HARNESS_SEED": request.seed, "HOME": "/tmp"},
            timeout=limit,
        )
        if result.timed_out:
            raise InfraError(f"verification exceeded {limit:.0f}s")
        with contextlib.suppress(FileNotFoundError, InfraError):
            sandbox.copy_out(f"{ROOT}/out", tmp / "out")
        outcome_file = tmp / "out" / "outcome.json"
        if outcome_file.is_symlink():  # never followed on the host
            outcome_file.unlink()
        if not outcome_file.is_file() and result.limit:  # the agent's code blew a limit
            return _stopped_by(result.limit, result.limit_detail), ref.id
        if not outcome_file.is_file():
            tail = (result.stderr or result.stdout).strip().splitlines()[-3:]
            raise InfraError(f"verifier wrote no outcome (exit {result.returncode}): {tail}")
        data = json.loads(outcome_file.read_text())
        if "fatal" in data:
            if data.get("kind") == "UserError":
                raise UserError(data["fatal"])
            raise InfraError(f"verifier failed: {data['fatal'].strip().splitlines()[-1]}")
        evidence = tmp / "out" / "evidence"
        if evidence_dest is not None and evidence.is_dir() and not evidence.is_symlink():
            copy_tree(evidence, evidence_dest)  # links out of it and special files stay out
        return with_note(VerifyOutcome.model_validate(data), skipped), ref.id
    finally:
        sandbox.stop()
        remove_tree(tmp)
