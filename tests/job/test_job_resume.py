"""A 6-trial job killed midway (SIGINT, then separately SIGKILL) and resumed: exactly
the missing trials run, none twice, nothing completed is lost or changed. Also: a changed
configuration is refused, and infrastructure errors are retried but failures are not."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.job.ledger import final_report, scan_results
from tests.support.job_env import job_env
from tests.support.signals import interruptible

pytestmark = pytest.mark.integration

JOB = "kill"
MATRIX = [
    "--agents",
    "slownop",
    "--scenarios",
    "smoke/py-fast,smoke/go-fast",
    "--reps",
    "3",
    "--concurrency",
    "2",
    "--sandbox",
    "local",
    "--job",
    JOB,
]
AGENTS = """
  - name: slownop
    version: "1.0"
    supports-llms: [none]
    adapter: tests.support.jobs_agents:SlowNop
  - name: flakynop
    version: "1.0"
    supports-llms: [none]
    adapter: tests.support.jobs_agents:FlakyNop
"""


@pytest.fixture
def env(project: Path, tmp_path: Path) -> dict[str, str]:
    return job_env(
        project,
        tmp_path,
        AGENTS,
        HARNESS_TEST_SLOW_S="2",
        HARNESS_TEST_FLAKY_DIR=str(tmp_path / "flaky"),
    )


def _cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "tests.support.jobs_agents", "run", *args]


def _ledger(jobs: Path) -> dict[str, dict[str, object]]:
    out = {}
    for path in (jobs / JOB / "trials").glob("*.json"):
        if path.name.endswith((".spec.json", ".out.json")):
            continue
        try:
            entry = json.loads(path.read_text())
        except ValueError:
            continue
        out[str(entry["key"])] = entry
    return out


def _completed(results: Path) -> dict[str, list[tuple[Path, bytes]]]:
    """Each trial's completed runs. An attempt that ended in ``error`` (the machine's
    fault, e.g. a toolchain starved under load) is retried by design: it is no completion."""
    found = scan_results(results, JOB)
    return {
        key: [
            (r.run_dir, (r.run_dir / "verify" / "report.json").read_bytes())
            for r in recs
            if r.outcome is not None and r.outcome != "error"
        ]
        for key, recs in found.items()
    }


def _what_ran(results: Path, jobs: Path) -> str:
    """Every run folder with its outcome, and the ledger: the message of a failed check."""
    runs = {
        key: [(r.run_dir.name, r.outcome) for r in recs]
        for key, recs in scan_results(results, JOB).items()
    }
    ledger = {k: (e["status"], e["attempts"], e.get("detail")) for k, e in _ledger(jobs).items()}
    return f"runs: {runs}\nledger: {ledger}"


def _workers_of(tmp: Path) -> list[int]:
    """Worker processes started for this test's job (none may outlive it)."""
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if "harness.job.worker" in cmdline and str(tmp) in cmdline:
            pids.append(int(proc.name))
    return pids


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["sigint", "sigkill"])
def test_killed_job_resumes_exactly_the_missing_trials(
    sig: signal.Signals, project: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    results, jobs = tmp_path / "results", tmp_path / "jobs"
    proc = subprocess.Popen(
        interruptible(_cmd(*MATRIX)),
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        while True:  # kill once some trials are done and others are running
            ledger = _ledger(jobs)
            statuses = [e["status"] for e in ledger.values()]
            if statuses.count("done") >= 2 and "running" in statuses:
                break
            if proc.poll() is not None:
                pytest.fail(f"the job ended before it could be killed:\n{proc.stdout.read()}")
            time.sleep(0.05)
        proc.send_signal(sig)
        output, _ = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == (130 if sig == signal.SIGINT else -signal.SIGKILL), output
    if sig == signal.SIGINT:
        statuses = [e["status"] for e in _ledger(jobs).values()]
        assert "interrupted" in statuses and "running" not in statuses, statuses

    before = _completed(results)
    done_before = {k for k, runs in before.items() if runs}
    assert 2 <= len(done_before) < 6, _what_ran(results, jobs)
    assert all(len(runs) <= 1 for runs in before.values()), _what_ran(results, jobs)

    rerun = subprocess.run(
        _cmd(*MATRIX),
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    missing = 6 - len(done_before)
    assert f"{len(done_before)} already complete, {missing} to run" in rerun.stdout

    after = _completed(results)
    none_twice = len(after) == 6 and all(len(runs) == 1 for runs in after.values())
    assert none_twice, _what_ran(results, jobs)
    for key in done_before:  # nothing completed was lost or rewritten
        assert after[key] == before[key]
    new_keys = {k for k in after if k not in done_before}
    assert len(new_keys) == missing
    for runs in after.values():
        report = final_report(runs[0][0])
        assert report is not None and report["outcome"] == "failed"
    ledger = _ledger(jobs)
    assert len(ledger) == 6 and all(e["status"] == "done" for e in ledger.values())
    assert sum(int(e["attempts"]) for e in ledger.values()) >= 6
    assert _workers_of(tmp_path) == []

    third = subprocess.run(
        _cmd(*MATRIX),
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert third.returncode == 0 and "6 already complete, 0 to run" in third.stdout


def test_changed_configuration_is_refused_unless_forced(
    project: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    base = [
        "--agents",
        "oracle",
        "--scenarios",
        "smoke/py-fast",
        "--sandbox",
        "local",
        "--job",
        JOB,
    ]
    first = subprocess.run(
        _cmd(*base), cwd=project, env=env, capture_output=True, text=True, check=False
    )
    assert first.returncode == 0, first.stdout + first.stderr
    changed = [*base, "--reps", "2"]
    refused = subprocess.run(
        _cmd(*changed), cwd=project, env=env, capture_output=True, text=True, check=False
    )
    assert refused.returncode == 2
    assert "different configuration (changed: reps)" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    forced = subprocess.run(
        _cmd(*changed, "--force"), cwd=project, env=env, capture_output=True, text=True, check=False
    )
    assert forced.returncode == 0, forced.stdout + forced.stderr
    assert "2 trials, 1 already complete, 1 to run" in forced.stdout
    resumed = subprocess.run(
        _cmd("--job", JOB), cwd=project, env=env, capture_output=True, text=True, check=False
    )
    assert "2 trials, 2 already complete, 0 to run" in resumed.stdout
    shutil.rmtree(tmp_path / "results")


def test_infra_errors_are_retried_and_failures_are_not(
    project: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    args = [
        "--agents",
        "flakynop,nop",
        "--scenarios",
        "smoke/py-fast",
        "--sandbox",
        "local",
        "--job",
        JOB,
        "--max-interruptions",
        "1",
        "--concurrency",
        "2",
    ]
    run = subprocess.run(
        _cmd(*args), cwd=project, env=env, capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "retry" in run.stdout and "simulated docker failure" in run.stdout
    ledger = {e["agent"]: e for e in _ledger(tmp_path / "jobs").values()}
    assert ledger["flakynop"]["attempts"] == 2 and ledger["flakynop"]["infra_errors"] == 1
    assert ledger["flakynop"]["outcome"] == "failed"  # nop-like once the infra recovered
    assert ledger["nop"]["attempts"] == 1 and ledger["nop"]["outcome"] == "failed"
    outcomes = sorted(
        r.outcome or "" for recs in scan_results(tmp_path / "results", JOB).values() for r in recs
    )
    assert outcomes == ["error", "failed", "failed"]  # the error run is kept, apart
