"""What every sandbox shares: a command's result (ok only when it exited 0 in time), a
spec's hardened defaults, and the protocol both backends' sandboxes meet."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.sandbox.base import ExecResult, Sandbox, SandboxSpec
from harness.sandbox.local import LocalSandbox

pytestmark = pytest.mark.unit


def test_a_result_is_ok_only_when_it_exited_zero_in_time() -> None:
    assert ExecResult(0, "", "", 0.1).ok
    assert not ExecResult(1, "", "", 0.1).ok
    assert not ExecResult(None, "", "", 9.0, limit="memory").ok  # killed
    assert not ExecResult(0, "", "", 9.0, timed_out=True).ok


def test_a_spec_starts_closed() -> None:
    spec = SandboxSpec(phase="agent")
    assert spec.network == "none" and spec.pids == 512 and spec.mounts == {}
    assert spec.project_dir == "/workspace" and spec.policy.read_only_root
    other = SandboxSpec(phase="verify")
    other.env["X"] = "1"
    assert spec.env == {}  # nothing shared between specs


def test_the_local_sandbox_meets_the_protocol(tmp_path: Path) -> None:
    assert isinstance(LocalSandbox(SandboxSpec(phase="verify", workspace=tmp_path)), Sandbox)
    assert not isinstance(object(), Sandbox)
