"""The Go seed of a Docker verification, built before the verifier starts.

A verifier container gets the seeds folder read-only (``verify.go.seed``); the seed for
its toolchain is built here first, once per scorer image, toolchain mounts and build
settings: a one-off container of the scorer image, network-less, with the toolchain
mounted as the verifier will have it and the seeds folder writable, and nothing of any
trial (no tree, no hidden files, no suite). A seed that cannot be built is not a
failure: the verifier then builds each target with an empty cache of its own.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from pathlib import Path

from harness.errors import InfraError
from harness.sandbox.base import SandboxSpec
from harness.sandbox.docker import DockerSandbox
from harness.sandbox.inject import HARNESS_PYTHONPATH, harness_source_mount
from harness.scenario.policy import SandboxPolicy
from harness.verify.go.seed import KEY_ENV, ROOT_ENV, SEED_TIMEOUT_S
from harness.verify.request import GOSEED_INSIDE, VerifyRequest

TOOL_ENV = ("PATH", "GOROOT", *KEY_ENV)


def seed_root(request: VerifyRequest) -> Path | None:
    """The host folder mounted as the seeds folder, when the request has one."""
    for host, inside in request.mounts.items():
        if inside.split(":", 1)[0] == GOSEED_INSIDE:
            return Path(host)
    return None


def ensure_seed(image: str, image_id: str, request: VerifyRequest, policy: SandboxPolicy,
                labels: dict[str, str]) -> bool:  # fmt: skip
    """Build the seed for ``request``'s toolchain unless it was (True: it exists)."""
    root = seed_root(request)
    if root is None or ROOT_ENV not in request.docker_env:
        return False
    env = {k: v for k, v in request.docker_env.items() if k in TOOL_ENV}
    tools = {h: i for h, i in request.mounts.items() if i.split(":", 1)[0] != GOSEED_INSIDE}
    ident = json.dumps([image_id, sorted(tools.items()), sorted(env.items())])
    marker = root / f".ready-{hashlib.sha256(ident.encode()).hexdigest()[:24]}"
    if marker.is_file():
        return True
    root.mkdir(parents=True, exist_ok=True)
    mounts = {**tools, **harness_source_mount(), str(root): f"{GOSEED_INSIDE}:rw"}
    spec = SandboxSpec(
        phase="verify",
        image=image,
        workspace=None,
        mount_workspace=False,
        network="none",
        labels={**labels, "harness.goseed": "1"},
        mounts=mounts,
        policy=policy,
    )
    sandbox = DockerSandbox(spec, create_project=False)
    try:
        sandbox.start()
        result = sandbox.exec(
            ["python3", "-m", "harness.verify.go.seed", GOSEED_INSIDE, json.dumps(env)],
            cwd="/",
            env={"PYTHONPATH": HARNESS_PYTHONPATH, "HOME": "/tmp"},
            timeout=SEED_TIMEOUT_S + 60,
        )
    except InfraError:
        return False
    finally:
        sandbox.stop()
    if result.returncode != 0:
        return False
    with contextlib.suppress(OSError):
        marker.touch()
    return True
