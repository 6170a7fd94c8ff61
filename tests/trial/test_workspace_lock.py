"""One harness process per workspace: another is refused naming the owner; stale locks recovered."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from harness.errors import UserError
from harness.trial.workspace_lock import holding, lock_path
from tests.support.holder import hold_workspace


@pytest.mark.unit
def test_a_held_workspace_is_refused_and_a_stale_lock_recovered(tmp_path: Path) -> None:
    ws = tmp_path / "workspace" / "t" / "calc"
    proc = hold_workspace(ws)
    try:
        with pytest.raises(UserError, match=f"pid {proc.pid}"), holding(ws):
            pass
    finally:
        proc.send_signal(signal.SIGKILL)  # dies holding it: the lock file stays behind
        proc.wait()
    assert lock_path(ws).is_file()
    with holding(ws):  # recovered
        assert lock_path(ws).read_text().strip() == str(os.getpid())


@pytest.mark.unit
def test_each_workspace_has_its_own_lock_outside_it(tmp_path: Path) -> None:
    a, b = tmp_path / "ws" / "a", tmp_path / "ws" / "b"
    assert lock_path(tmp_path / "x" / "a") != lock_path(a)  # the whole path names the lock
    assert lock_path(a) != lock_path(b) and lock_path(a) == lock_path(
        tmp_path / "ws" / ".." / "ws" / "a"
    )
    with holding(a), holding(b):  # two workspaces at once in one process
        assert not (tmp_path / "ws").exists()  # the workspace tree gets nothing
