"""Run one test command as the test user: under the reaper, in a home and temp folder of
its own, its output capped; every process of it is dead when the call returns."""

from __future__ import annotations

import shutil
from pathlib import Path

from harness.verify.isolation.test_user import TestUser, run_reaped

OUTPUT_CAP = 4000


def tail(text: str, limit: int = OUTPUT_CAP) -> str:
    """The last ``limit`` characters of ``text`` (``...`` before them when cut)."""
    return text if len(text) <= limit else "..." + text[-limit:]


def run_command(
    cmd: list[str], cwd: Path, env: dict[str, str], timeout: float, user: TestUser | None = None
) -> tuple[int | None, str]:
    """Run a test command under the reaper (as ``user``): every process of it is dead
    when this returns, so nothing of the run can touch what is parsed afterwards."""
    if shutil.which(cmd[0], path=env.get("PATH")) is None and not Path(cmd[0]).is_file():
        return 127, f"{cmd[0]}: command not found"
    ran = run_reaped(cmd, cwd, env, timeout, user)
    return ran.returncode, ran.output


def home_env(home: Path) -> dict[str, str]:
    """The test user's own home and temp folder (the caller's TMPDIR, e.g. a Ray worker's
    0700 folder, may not be theirs to write)."""
    tmp = str(home / "tmp")
    return {
        "HOME": str(home),
        "USER": "harness-tests",
        "LOGNAME": "harness-tests",
        "TMPDIR": tmp,
        "GOTMPDIR": tmp,
    }
