"""Nothing of a test run outlives it, its output is kept to a cap, and the tests run as a
user of their own (real processes, no Docker)."""

from __future__ import annotations

import os
import secrets
import sys
import tempfile
import time
from pathlib import Path

import pytest

from harness.errors import InfraError
from harness.grader.containment.control import token_processes
from harness.verify.isolation import test_user
from harness.verify.isolation.test_user import TestUser, run_reaped

pytestmark = pytest.mark.unit


def test_nothing_of_a_test_run_outlives_it(tmp_path: Path) -> None:
    token = "harness-token-" + secrets.token_hex(6)
    daemon = f"(setsid sh -c 'sleep 60; echo {token}' &) ; (sleep 60 # {token}\n) & echo started"
    began = time.monotonic()
    ran = run_reaped(["sh", "-c", daemon], tmp_path, dict(os.environ), 30, None)
    assert "started" in ran.output and ran.returncode == 0
    assert ran.killed >= 2 and time.monotonic() - began < 20
    assert token_processes(token) == []


def test_a_test_run_that_hangs_is_killed(tmp_path: Path) -> None:
    ran = run_reaped(["sh", "-c", "sleep 60"], tmp_path, dict(os.environ), 1, None)
    assert ran.returncode is None and "timed out" in ran.output


def test_a_test_run_that_writes_without_end_is_kept_to_a_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(test_user, "OUTPUT_KEEP", 4096)
    flood = "head -c 3000000 /dev/zero | tr '\\0' x; echo done >&2"
    ran = run_reaped(["sh", "-c", flood], tmp_path, dict(os.environ), 30, None)
    assert ran.returncode == 0 and "done" in ran.output  # stderr read to its end too
    assert ran.output.startswith("x" * 4096) and ran.output.count("x") == 4096
    assert f"cut after 4096 bytes ({3000000 - 4096} more)" in ran.output


@pytest.mark.skipif(os.geteuid() != 0, reason="switching user needs root")
def test_tests_run_as_their_own_user(tmp_path: Path) -> None:
    mine = tmp_path / "outcome.json"
    mine.write_text("{}")
    probe = (
        "import os\nprint(os.getuid())\n"
        f"try:\n    open({str(mine)!r}, 'w').write('forged')\n"
        "except OSError:\n    print('denied')\n"
    )
    tmp_path.chmod(0o755)
    ran = run_reaped(
        [sys.executable, "-c", probe], tmp_path, dict(os.environ), 30, TestUser(61001, True)
    )
    assert "61001" in ran.output and "denied" in ran.output
    assert mine.read_text() == "{}"


def test_without_root_nobody_else_runs_the_tests(monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.verify.isolation import test_user

    monkeypatch.setattr(test_user.os, "geteuid", lambda: 1000)
    assert test_user.effective_user(61001, True) is None
    assert test_user.statement(None).startswith("NOT enforced")
    monkeypatch.setattr(test_user.os, "geteuid", lambda: 0)
    assert test_user.effective_user(61001, False) == TestUser(61001, False)
    assert test_user.effective_user(None, False) is None
    assert test_user.statement(TestUser(10001)).startswith("enforced: tests ran as uid 10001")


def test_a_home_no_other_uid_can_reach_is_the_harness_fault(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A private temporary folder (a Ray worker's 0700 TMPDIR) hid the test binaries from
    the test user, whose failure read as the code's: homes go where every uid reaches,
    and where none can, the trial is the harness's ``error``."""
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    assert test_user.home_base() != private  # /tmp or /var/tmp instead
    monkeypatch.setattr(test_user, "reachable_by_all", lambda _p: False)
    unreachable = pytest.raises(InfraError, match="no temporary folder the test user can reach")
    with unreachable, test_user.test_home(61001):
        pass
