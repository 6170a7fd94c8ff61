"""Jobs that recover: a trial left as an infrastructure error is run again by the next
``harness run`` (each invocation up to 1 + --max-interruptions attempts), which says what it
retried and exits 3 while errors remain; ``--no-retry-errors`` leaves them (still exit 3);
an error the next attempt would meet again (a host name that does not resolve) is not
retried in a loop."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.job.retry import NOT_RETRIED, say_steady, steady
from tests.support.job_env import job_env

JOB = "recover"
AGENTS = """
  - name: brokennop
    version: "1.0"
    supports-llms: [none]
    adapter: tests.support.jobs_agents:BrokenNop
"""


@pytest.fixture
def env(project: Path, tmp_path: Path) -> dict[str, str]:
    return job_env(
        project,
        tmp_path,
        AGENTS,
        HARNESS_WORKSPACE=str(tmp_path / "ws"),
        HARNESS_TEST_BROKEN=str(tmp_path / "broken"),
    )


def _run(project: Path, env: dict[str, str], *extra: str) -> subprocess.CompletedProcess[str]:
    args = ["--agents", "brokennop,nop", "--scenarios", "smoke/py-fast", "--sandbox", "local"]
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", "run", *args, "--job", JOB, *extra],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _entry(tmp_path: Path, agent: str) -> dict[str, object]:
    for path in (tmp_path / "jobs" / JOB / "trials").glob("*.json"):
        if path.name.endswith((".spec.json", ".out.json")):
            continue
        entry = json.loads(path.read_text())
        if entry["agent"] == agent:
            return dict(entry)
    raise AssertionError(f"no ledger entry for {agent}")


@pytest.mark.integration
def test_errors_are_run_again_until_fixed(
    project: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    (tmp_path / "broken").write_text("docker\n")
    first = _run(project, env, "--max-interruptions", "1")
    assert first.returncode == 3, first.stdout + first.stderr
    assert _entry(tmp_path, "brokennop")["attempts"] == 2  # 1 + --max-interruptions

    again = _run(project, env, "--max-interruptions", "1")  # not fixed yet
    assert again.returncode == 3, again.stdout + again.stderr
    assert "1 already complete, 1 to run" in again.stdout
    assert "retrying 1 trial(s) that ended in an infrastructure error" in again.stdout
    assert "retried 1 earlier infrastructure error(s): 0 recovered, 1 not" in again.stdout
    assert _entry(tmp_path, "brokennop")["attempts"] == 4  # bounded per invocation

    left = _run(project, env, "--no-retry-errors")
    assert left.returncode == 3, left.stdout + left.stderr  # the error is still there
    assert "2 already complete, 0 to run" in left.stdout
    assert "1 trial(s) of this job are infrastructure errors" in left.stdout
    assert _entry(tmp_path, "brokennop")["attempts"] == 4

    (tmp_path / "broken").unlink()  # the user fixes the machine
    fixed = _run(project, env)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "retried 1 earlier infrastructure error(s): 1 recovered, 0 not" in fixed.stdout
    entry = _entry(tmp_path, "brokennop")
    assert (entry["status"], entry["outcome"], entry["attempts"]) == ("done", "failed", 5)
    assert _entry(tmp_path, "nop")["attempts"] == 1  # a graded trial is never run again


@pytest.mark.integration
def test_an_error_that_would_recur_is_not_retried_in_a_loop(
    project: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    (tmp_path / "broken").write_text("dns\n")
    first = _run(project, env, "--max-interruptions", "3")
    assert first.returncode == 3, first.stdout + first.stderr
    entry = _entry(tmp_path, "brokennop")
    assert entry["attempts"] == 1 and entry["status"] == "error"
    assert "Could not resolve host" in str(entry["detail"])
    assert "not retried" in str(entry["detail"])


@pytest.mark.unit
def test_a_steady_error_is_told_by_its_flag_or_its_cause() -> None:
    assert steady({"steady": True, "detail": "anything"})
    assert steady({"detail": "curl: (6) Could not resolve host: api.example"})
    assert steady({"detail": "connect: Network is unreachable"})
    assert not steady({"detail": "container failed to start"})
    assert not steady({"detail": None}) and not steady({})


@pytest.mark.unit
def test_a_steady_error_says_it_was_not_retried_once() -> None:
    said = say_steady("agent program not found")
    assert said == f"agent program not found ({NOT_RETRIED})"
    assert say_steady(said) == said
