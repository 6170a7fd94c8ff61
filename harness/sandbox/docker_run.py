"""What ``docker run`` is given for a Docker sandbox: the idle keep-alive under
docker-init as its own uid, every capability dropped (root's file powers given back when
commands run as root), the read-only root, ``no-new-privileges`` and the limits."""

from __future__ import annotations

from typing import Any

from harness.sandbox.base import SandboxSpec
from harness.sandbox.docker_io import HOME_DIR

KEEPALIVE = ["sleep", "infinity"]
# Root's usual powers over files, given back when commands run as root (non-root: false,
# or capabilities added), so it can work on and hand back a workspace it does not own.
ROOT_CAPS = ["CHOWN", "DAC_OVERRIDE", "FOWNER"]


def run_options(
    spec: SandboxSpec, name: str, keeper: int, caps: list[str], labels: dict[str, str], mount: bool
) -> dict[str, Any]:
    """The container's options (those left unset are not passed)."""
    policy = spec.policy
    kwargs: dict[str, Any] = {
        "command": KEEPALIVE,
        "name": name,
        "detach": True,
        "init": True,
        "user": f"{keeper}:{keeper}",
        "labels": labels,
        "working_dir": spec.project_dir if mount else None,
        "environment": {"HOME": HOME_DIR, **spec.env},
        "pids_limit": spec.pids,
        "mem_limit": spec.memory,
        "nano_cpus": int(spec.cpus * 1e9) if spec.cpus else None,
        "read_only": policy.read_only_root,
        "cap_drop": ["ALL"],
        "cap_add": caps or None,
        "security_opt": ["no-new-privileges"] if policy.no_new_privileges else None,
    }
    return {k: v for k, v in kwargs.items() if v is not None}
