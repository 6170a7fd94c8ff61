"""The Ray executor on a real local cluster (``ray start`` head + worker, loopback only):
a 6-trial job gives the same results and report tables as the local executor; a worker
node killed mid-job costs one interruption and the job still records every trial once.
Also, without a cluster: the executor seam's refusals and the result transfer."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from harness.cli.job import run_command
from harness.config.settings import Settings
from harness.errors import InfraError, UserError
from harness.job.executors.base import make_executor
from harness.job.executors.ray import localise, pack_run, unpack_run
from harness.job.ledger import scan_results
from harness.report.collect import read_run
from harness.report.summary import summarise
from tests.conftest import REPO_ROOT
from tests.support.signals import interruptible

AGENTS = """
  - name: slownop
    version: "1.0"
    supports-llms: [none]
    adapter: tests.support.jobs_agents:SlowNop
  - name: routerprobe
    version: "1.0"
    supports-llms: [none]
    adapter: tests.support.ray_agents:RouterProbe
"""
MATRIX = [
    "--agents",
    "oracle,nop,slownop",
    "--scenarios",
    "smoke/py-fast,smoke/go-fast",
    "--sandbox",
    "local",
    "--concurrency",
    "2",
]


# -- without a cluster ----------------------------------------------------------------


@pytest.mark.unit
def test_ray_executor_without_ray_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    with pytest.raises(UserError) as err:
        make_executor("ray", Settings.from_env(tmp_path), address="127.0.0.2:1")
    assert err.value.exit_code == 2
    assert ".[ray]" in err.value.one_line()

    app = typer.Typer()
    app.command()(run_command)  # the one command: invoked without its name
    result = CliRunner().invoke(
        app,
        ["--agents", "nop", "--scenarios", "smoke/py-fast", "--executor", "ray"],
        env={"HARNESS_SCENARIO_ROOT": str(REPO_ROOT / "scenarios")},
    )
    assert result.exit_code == 2, result.output
    assert ".[ray]" in result.output


@pytest.mark.unit
def test_executor_choice_is_checked(tmp_path: Path) -> None:
    settings = Settings.from_env(tmp_path)
    with pytest.raises(UserError, match="unknown executor"):
        make_executor("slurm", settings)
    with pytest.raises(UserError, match="--address is for the ray executor"):
        make_executor("local", settings, address="127.0.0.2:6379")


@pytest.mark.unit
def test_a_bad_cluster_address_stops_the_job_before_anything_is_written(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    pytest.importorskip("ray")
    from tests.support.raycluster import free_port

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    settings = Settings.from_env(tmp_path)
    with pytest.raises(UserError, match="needs a cluster address"):
        make_executor("ray", settings)
    with pytest.raises(UserError, match="not HOST:PORT"):
        make_executor("ray", settings, address="head-without-port")
    with pytest.raises(InfraError, match="no Ray head answers"):  # fast, not ray.init's minutes
        make_executor("ray", settings, address=f"127.0.0.2:{free_port()}")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.unit
def test_result_folder_travels_whole_and_lands_atomically(tmp_path: Path) -> None:
    run = tmp_path / "node" / "results" / "smoke" / "py-fast" / "r1"
    (run / "verify").mkdir(parents=True)
    (run / "run.json").write_text('{"run_id": "r1"}')
    (run / "verify" / "report.json").write_text('{"outcome": "success"}')
    archive = pack_run(run)
    results = tmp_path / "driver" / "results"
    dest = unpack_run(archive, results, "smoke/py-fast/r1")
    assert dest == results / "smoke" / "py-fast" / "r1"
    assert (dest / "verify" / "report.json").read_text() == '{"outcome": "success"}'
    assert [p.name for p in dest.parent.iterdir()] == ["r1"]  # no partial left beside it
    with pytest.raises(InfraError, match="already exists"):
        unpack_run(archive, results, "smoke/py-fast/r1")  # never two copies of one run
    with pytest.raises(InfraError, match="outside"):
        unpack_run(archive, results, "../escape")
    evil = io.BytesIO()
    with tarfile.open(fileobj=evil, mode="w:gz") as tar:
        info = tarfile.TarInfo("../../outside.txt")
        info.size = 1
        tar.addfile(info, io.BytesIO(b"x"))
    with pytest.raises(tarfile.TarError):
        unpack_run(evil.getvalue(), results, "smoke/py-fast/r2")
    assert not (results / "smoke" / "py-fast" / "r2").exists()
    assert not list(tmp_path.rglob("outside.txt"))


@pytest.mark.unit
def test_settings_follow_the_project_to_the_node() -> None:
    driver = {
        "project_root": "/home/me/bench",
        "scenario_root": "/home/me/bench/scenarios",
        "repo_cache": "/srv/mirrors",
        "results": "/home/me/bench/results",
        "skip_remote": True,
    }
    node = localise(driver, Path("/home/me/bench"), Path("/tmp/ray/working_dir/abc"))
    assert node["project_root"] == "/tmp/ray/working_dir/abc"
    assert node["scenario_root"] == "/tmp/ray/working_dir/abc/scenarios"
    assert node["repo_cache"] == "/srv/mirrors"  # outside the project: same path everywhere
    assert node["skip_remote"] is True


# -- on a real local cluster ----------------------------------------------------------


@pytest.fixture(scope="module")
def cluster_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HARNESS_", "RAY_"))}
    env["PYTHONPATH"] = str(REPO_ROOT)
    env["HARNESS_TEST_SLOW_S"] = "1"
    return env


@pytest.fixture(scope="module")
def cluster(cluster_env: dict[str, str]) -> Iterator[Any]:
    pytest.importorskip("ray")
    from tests.support.raycluster import local_cluster

    with local_cluster(cluster_env, workers=1) as c:
        yield c
        left = c
    deadline = time.monotonic() + 15
    while left.leftovers() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert left.leftovers() == [], "the test cluster left processes behind"
    assert not left.root.exists()


def _project(tmp: Path) -> Path:
    root = tmp / "project"
    root.mkdir()
    for name in ("agents.yml", "llms.yml"):
        (root / name).write_text((REPO_ROOT / name).read_text())
    with (root / "agents.yml").open("a") as fh:
        fh.write(AGENTS)
    return root


def _harness(project: Path, out: Path, env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    full = {
        **env,
        "HARNESS_SCENARIO_ROOT": str(REPO_ROOT / "scenarios"),
        "HARNESS_RESULTS": str(out / "results"),
        "HARNESS_JOBS": str(out / "jobs"),
        "HARNESS_WORKSPACE": str(out / "workspace"),
    }
    return subprocess.Popen(
        interruptible([sys.executable, "-m", "harness.cli", "run", *args]),
        cwd=project,
        env=full,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _finish(proc: subprocess.Popen[str], timeout: float = 420) -> str:
    out, _ = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, out
    return out


def _ledger(out: Path, job: str) -> dict[str, dict[str, Any]]:
    entries = {}
    for path in (out / "jobs" / job / "trials").glob("*.json"):
        if not path.name.endswith((".spec.json", ".out.json")):
            entry = json.loads(path.read_text())
            entries[entry["key"]] = entry
    return entries


def _running(out: Path, job: str) -> bool:
    """A trial of ``job`` is recorded as running in its ledger."""
    return any(e.get("status") == "running" for e in _ledger(out, job).values())


def _outcomes(records: list[Any]) -> list[str]:
    """Each run's outcome and, for a harness error, what it said (a run recorded twice is
    most often an infrastructure error retried: which one shows what to fix)."""
    said = []
    for record in records:
        run = read_run(record.run_dir)
        error = (run.report.get("error") if run is not None else None) or ""
        said.append(f"{record.outcome} {str(error)[:300]}".strip())
    return said


def _comparable(out: Path, job: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Per trial: the verdict and the agent's diff; and the report tables built from the
    runs (timings and ids left out: they differ between any two runs)."""
    per_trial: dict[str, Any] = {}
    runs = []
    for key, records in scan_results(out / "results", job).items():
        assert len(records) == 1, f"{key} recorded {len(records)} times: {_outcomes(records)}"
        run = read_run(records[0].run_dir)
        assert run is not None, key
        runs.append(run)
        report = run.report
        per_trial[key] = {
            "outcome": report["outcome"],
            "score": report.get("score"),
            "era": report.get("era"),
            "tests": sorted((t["name"], t["passed"]) for t in report.get("tests") or []),
            "rules": sorted((r["rule"], r["ok"]) for r in report.get("rules") or []),
            "diff": (records[0].run_dir / "workspace.diff").read_text(),
            "files": sorted(  # goagentbench's <run_id>.verify.json is named by the run
                p.relative_to(records[0].run_dir).as_posix().replace(records[0].run_dir.name, "RUN")
                for p in records[0].run_dir.rglob("*")
                if p.is_file()
            ),
        }
    tables = [
        {
            "era": t.era,
            "entrants": [
                {k: v for k, v in e.as_dict().items() if k not in {"wall_s"}} for e in t.entrants
            ],
        }
        for t in summarise(runs)
    ]
    return per_trial, tables


@pytest.mark.ray
def test_a_job_on_the_cluster_reports_as_a_local_job(
    cluster: Any, cluster_env: dict[str, str], tmp_path: Path
) -> None:
    project = _project(tmp_path)
    ray_out, local_out = tmp_path / "ray", tmp_path / "local"
    ray_job = _harness(
        project, ray_out, cluster_env, *MATRIX, "--job", "j", "--executor", "ray",
        "--address", cluster.address,
    )  # fmt: skip
    _finish(_harness(project, local_out, cluster_env, *MATRIX, "--job", "j"))
    printed = _finish(ray_job)
    assert "finished: 6 trial(s): failed 4, success 2" in printed, printed

    ray_trials, ray_tables = _comparable(ray_out, "j")
    local_trials, local_tables = _comparable(local_out, "j")
    assert len(ray_trials) == 6
    assert ray_trials == local_trials
    assert ray_tables == local_tables
    ledger = _ledger(ray_out, "j")
    assert {e["status"] for e in ledger.values()} == {"done"}
    assert all(e["attempts"] == 1 and e["infra_errors"] == 0 for e in ledger.values())
    # the trials ran on the cluster's nodes, both of them
    logs = "".join(p.read_text() for p in (ray_out / "jobs" / "j" / "logs").glob("*.log"))
    nodes = {line.split(" on node ")[1].split(":")[0] for line in logs.splitlines()}
    assert len(nodes) == 2, logs
    assert not (ray_out / "workspace").exists() or not any((ray_out / "workspace").iterdir())

    # resume: the ray job is complete, so nothing runs again
    again = _finish(
        _harness(project, ray_out, cluster_env, *MATRIX, "--job", "j", "--executor", "ray",
                 "--address", cluster.address)
    )  # fmt: skip
    assert "6 already complete, 0 to run" in again


@pytest.mark.ray
def test_a_node_lost_mid_job_costs_one_retry_and_nothing_else(
    cluster: Any, cluster_env: dict[str, str], tmp_path: Path
) -> None:
    project = _project(tmp_path)
    out = tmp_path / "out"
    victim = cluster.add_node("victim")
    env = {**cluster_env, "HARNESS_TEST_SLOW_S": "4"}
    job = _harness(
        project, out, env, "--agents", "slownop", "--scenarios", "smoke/py-fast,smoke/go-fast",
        "--reps", "3", "--sandbox", "local", "--job", "lost",  # concurrency: 3 docker slots
        "--executor", "ray", "--address", cluster.address, "--max-interruptions", "2",
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 90
        while not victim.trials_in_flight():
            assert job.poll() is None, job.communicate()[0]
            assert time.monotonic() < deadline, "no trial reached the victim node"
            time.sleep(0.2)
        time.sleep(1.0)  # well inside the trial's 4 s agent phase
        victim.kill()
        printed = _finish(job)
    finally:
        if job.poll() is None:
            job.kill()
    assert "finished: 6 trial(s): failed 6" in printed, printed

    ledger = _ledger(out, "lost")
    assert len(ledger) == 6
    assert {e["status"] for e in ledger.values()} == {"done"}
    retried = [e for e in ledger.values() if e["infra_errors"]]
    assert len(retried) >= 1, ledger
    assert all(e["attempts"] == 1 + e["infra_errors"] for e in ledger.values())
    # every trial recorded exactly once: no lost run, no duplicate, no half-written folder
    found = scan_results(out / "results", "lost")
    assert sorted(found) == sorted(ledger)
    assert all(len(records) == 1 and records[0].outcome == "failed" for records in found.values())
    folders = [p for p in (out / "results").glob("smoke/*/*") if p.is_dir()]
    assert len(folders) == 6, folders
    logs = "".join(p.read_text() for p in (out / "jobs" / "lost" / "logs").glob("*.log"))
    assert "infrastructure interruption" in logs, logs


@pytest.mark.ray
def test_every_node_reaches_the_one_router_of_the_job(
    cluster: Any, cluster_env: dict[str, str], tmp_path: Path
) -> None:
    project = _project(tmp_path)
    (project / "fleet.yml").write_text(  # a host that is down: the router starts anyway
        "hosts:\n  - name: down\n    base_url: http://127.0.0.2:9\n"
    )
    out = tmp_path / "out"
    _finish(
        _harness(
            project, out, cluster_env, "--agents", "routerprobe", "--scenarios",
            "smoke/py-fast", "--reps", "4", "--sandbox", "local", "--concurrency", "2",
            "--job", "r", "--executor", "ray", "--address", cluster.address,
            "--router-host", "127.0.0.2",
        )
    )  # fmt: skip
    seen = [
        json.loads((r.run_dir / "agent" / "transcript.txt").read_text())
        for records in scan_results(out / "results", "r").values()
        for r in records
    ]
    assert len(seen) == 4
    routers = {s["router"] for s in seen}
    assert len(routers) == 1 and next(iter(routers)).startswith("http://127.0.0.2:"), seen
    assert all(s["health"] == {"ok": True} for s in seen), seen
    logs = "".join(p.read_text() for p in (out / "jobs" / "r" / "logs").glob("*.log"))
    nodes = {line.split(" on node ")[1].split(":")[0] for line in logs.splitlines()}
    assert len(nodes) >= 2, logs  # trials on more than one node, one router for all


@pytest.mark.ray
def test_doctor_reports_the_cluster(cluster: Any, cluster_env: dict[str, str]) -> None:
    from harness.cli.doctor import _cluster_checks

    (check,) = _cluster_checks(cluster.address)
    assert check.ok, check
    assert "node(s) alive" in check.detail and "'docker' slot(s)" in check.detail


@pytest.mark.ray
def test_ctrl_c_stops_the_cluster_s_trials_cleanly(
    cluster: Any, cluster_env: dict[str, str], tmp_path: Path
) -> None:
    project = _project(tmp_path)
    out = tmp_path / "out"
    env = {**cluster_env, "HARNESS_TEST_SLOW_S": "30"}
    job = _harness(
        project, out, env, "--agents", "slownop", "--scenarios", "smoke/py-fast",
        "--reps", "3", "--sandbox", "local", "--concurrency", "2", "--job", "c",
        "--executor", "ray", "--address", cluster.address,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        live = [n for n in cluster.nodes if n.proc.poll() is None]  # not a node killed earlier
        # this job's trial: its ledger says running (a node may still hold a trial an
        # earlier test's job left behind)
        while not (any(n.trials_in_flight() for n in live) and _running(out, "c")):
            assert job.poll() is None, job.communicate()[0]
            assert time.monotonic() < deadline, "no trial started"
            time.sleep(0.2)
        time.sleep(1.0)
        job.send_signal(signal.SIGINT)
        printed, _ = job.communicate(timeout=60)
    finally:
        if job.poll() is None:
            job.kill()
    assert job.returncode == 130, printed
    statuses = [e["status"] for e in _ledger(out, "c").values()]
    assert "running" not in statuses and statuses.count("interrupted") >= 1, statuses
    settle = time.monotonic() + 60  # the nodes clean up (their trials' stop takes a while)
    while any(n.trials_in_flight() for n in live) and time.monotonic() < settle:
        time.sleep(0.5)
    left = [d for n in live for d in n.trials_in_flight()]
    assert not left, left  # a killed task's worker removes its scratch (nobody else will)
    assert scan_results(out / "results", "c") == {}
