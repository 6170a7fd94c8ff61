"""LocalSandbox: commands on the host, in the workspace, with process-group timeouts."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from harness.backends import get_backend
from harness.errors import UserError
from harness.sandbox.base import Sandbox, SandboxSpec
from harness.sandbox.local import LocalSandbox
from harness.util.agentfiles import OverCap

pytestmark = pytest.mark.unit


@pytest.fixture
def sandbox(tmp_path: Path) -> LocalSandbox:
    box = LocalSandbox(SandboxSpec(phase="agent", workspace=tmp_path / "ws", env={"A": "1"}))
    box.start()
    try:
        yield box
    finally:
        box.stop()


def _alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def test_exec_runs_in_workspace_with_env(sandbox: LocalSandbox) -> None:
    result = sandbox.exec(["sh", "-c", 'pwd; echo "$A$B"; echo oops >&2; exit 4'], env={"B": "2"})
    assert result.returncode == 4
    assert result.stdout.splitlines() == [sandbox.project_dir, "12"]
    assert result.stderr == "oops\n"
    assert not result.ok and not result.timed_out


def test_missing_program_is_a_result_not_a_crash(sandbox: LocalSandbox) -> None:
    result = sandbox.exec(["definitely-not-a-program-xyz"])
    assert result.returncode == 127
    assert "definitely-not-a-program-xyz" in result.stderr


def test_timeout_kills_the_whole_process_group(sandbox: LocalSandbox) -> None:
    script = "sleep 60 & echo $! > bg.pid; sleep 60"
    result = sandbox.exec(["sh", "-c", script], timeout=1)
    assert result.timed_out and result.returncode is None
    pid = int((Path(sandbox.project_dir) / "bg.pid").read_text())
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid), "the grandchild outlived the timeout"


def test_stop_kills_a_setsid_daemon_and_a_double_fork(sandbox: LocalSandbox) -> None:
    script = (
        "setsid sh -c 'echo $$ > daemon.pid; exec sleep 300' </dev/null >/dev/null 2>&1 &"
        " (sh -c 'echo $$ > orphan.pid; exec sleep 300' </dev/null >/dev/null 2>&1 &) ; sleep 0.5"
    )
    assert sandbox.exec(["sh", "-c", script], timeout=10).returncode == 0
    pids = [int((Path(sandbox.project_dir) / f).read_text()) for f in ("daemon.pid", "orphan.pid")]
    assert all(_alive(p) for p in pids)  # the command returned: they left its group
    sandbox.stop()  # the agent phase ends: nothing it started may reach verification
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(p) for p in pids), "a process of the sandbox outlived stop()"


def test_copy_in_and_out(sandbox: LocalSandbox, tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "m.py").write_text("X = 1\n")
    (src / "one.txt").write_text("one")
    sandbox.copy_in(src / "pkg", "lib/pkg")
    sandbox.copy_in(src / "one.txt", "deep/er/one.txt")
    assert (Path(sandbox.project_dir) / "lib/pkg/m.py").read_text() == "X = 1\n"
    out = tmp_path / "out"
    sandbox.copy_out("lib/pkg", out / "pkg")
    sandbox.copy_out("deep/er/one.txt", out / "o.txt")
    assert (out / "pkg" / "m.py").read_text() == "X = 1\n"
    assert (out / "o.txt").read_text() == "one"
    with pytest.raises(FileNotFoundError):
        sandbox.copy_out("nope", out / "nope")
    with open(Path(sandbox.project_dir) / "lib/pkg/huge", "wb") as fh:
        fh.truncate(2 << 30)  # sparse, 2 GiB apparent
    with pytest.raises(OverCap):
        sandbox.copy_out("lib/pkg", out / "capped", max_bytes=1 << 20)
    assert not (out / "capped").exists()


def test_backend_sandbox_and_protocol(tmp_path: Path) -> None:
    box = get_backend("local").sandbox(SandboxSpec(phase="verify", workspace=tmp_path))
    assert isinstance(box, LocalSandbox) and isinstance(box, Sandbox)
    with pytest.raises(UserError):
        get_backend("vm")
    with pytest.raises(UserError):
        LocalSandbox(SandboxSpec(phase="verify"))
    assert os.path.isdir(box.project_dir)
