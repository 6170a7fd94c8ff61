"""What ``docker run`` is given: a keep-alive under init as its own uid, every capability
dropped (only those asked given back), a read-only root, no-new-privileges, the limits;
a relaxed policy and unset limits are passed as such."""

from __future__ import annotations

import pytest

from harness.sandbox.base import SandboxSpec
from harness.sandbox.docker_io import HOME_DIR
from harness.sandbox.docker_run import KEEPALIVE, run_options
from harness.scenario.policy import SandboxPolicy

pytestmark = pytest.mark.unit


def test_a_hardened_container() -> None:
    spec = SandboxSpec(phase="agent", env={"A": "1"}, cpus=1.5, memory="2g", pids=64)
    opts = run_options(spec, "h-1", 1234, ["CHOWN"], {"harness": "1"}, mount=True)
    assert opts == {
        "command": KEEPALIVE,
        "name": "h-1",
        "detach": True,
        "init": True,
        "user": "1234:1234",
        "labels": {"harness": "1"},
        "working_dir": "/workspace",
        "environment": {"HOME": HOME_DIR, "A": "1"},
        "pids_limit": 64,
        "mem_limit": "2g",
        "nano_cpus": 1_500_000_000,
        "read_only": True,
        "cap_drop": ["ALL"],
        "cap_add": ["CHOWN"],
        "security_opt": ["no-new-privileges"],
    }


def test_a_relaxed_policy_and_unset_limits() -> None:
    policy = SandboxPolicy.model_validate({"read-only-root": False, "no-new-privileges": False})
    spec = SandboxSpec(phase="verify", pids=None, policy=policy)
    opts = run_options(spec, "h-2", 1000, [], {}, mount=False)
    assert opts["read_only"] is False and opts["cap_drop"] == ["ALL"]
    for unset in ("working_dir", "pids_limit", "mem_limit", "nano_cpus", "cap_add", "security_opt"):
        assert unset not in opts, unset
