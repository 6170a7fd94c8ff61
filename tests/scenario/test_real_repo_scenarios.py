"""Scenarios on real public repositories (go/*, py/* with ``repo: github.com/...``).

They are served from a repository cache built from ``../shared/repos`` (never the
network). For each: ``harness validate`` finds the pinned commit in the cache, the
oracle (reference solution) succeeds and the nop agent fails, on the host; one Go and one
Python scenario also run in Docker. The defects are proven by
tests/scenario/test_scenarios_content.py and the controls by tests/grader/test_controls.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from harness.scenario.load import list_scenarios, load_scenario
from tests.conftest import REPO_ROOT
from tests.support.repo_cache import SHARED_REPOS, is_real_repo, shared_repo_cache

pytestmark = pytest.mark.integration

SCENARIOS = REPO_ROOT / "scenarios"
REAL = [
    name
    for name in list_scenarios(SCENARIOS)
    if is_real_repo(load_scenario(name, SCENARIOS).scenario.repo)
]
# Mined scenarios (hidden tests from the fix commit, verify.tests-from): their oracle and
# nop trees are the controls' HIGH and LOW trees (tests/grader/test_controls.py proves them all);
# here one of them runs end to end, on the host and in Docker.
MINED = [n for n in REAL if load_scenario(n, SCENARIOS).scenario.verify.tests_from]
MINED_SAMPLE = ["go/httprouter-tsr-param"]
LOCAL_RUNS = [n for n in REAL if n not in MINED or n in MINED_SAMPLE]
IN_DOCKER = ["go/uuid-validate", "py/humanize-rollover", *MINED_SAMPLE]


def harness(args: list[str], tmp: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "HARNESS_WORKSPACE": str(tmp / "ws"),
        "HARNESS_RESULTS": str(tmp / "res"),
        "HARNESS_SCENARIO_ROOT": str(SCENARIOS),
        "HARNESS_REPO_CACHE": str(cache),
        "HARNESS_SKIP_REMOTE": "1",
    }
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", *args],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def report_of(tmp: Path, scenario: str) -> dict:
    runs = sorted((tmp / "res" / scenario).iterdir())
    assert len(runs) == 1, runs
    return json.loads((runs[0] / "verify" / "report.json").read_text())


@pytest.fixture(scope="module")
def cache() -> Path:
    return shared_repo_cache()


@pytest.fixture(scope="module")
def local_runs(cache: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """(scenario, agent) -> (exit code, report, output): every trial once, two at a time."""
    base = tmp_path_factory.mktemp("real-local")
    jobs = [(name, agent) for name in LOCAL_RUNS for agent in ("oracle", "nop")]

    def one(job: tuple[str, str]) -> tuple[int, dict | None, str]:
        name, agent = job
        tmp = base / f"{name.replace('/', '-')}-{agent}"
        done = harness(["exec", "--agent", agent, "--sandbox", "local", name], tmp, cache)
        try:
            report = report_of(tmp, name)
        except (OSError, AssertionError, ValueError):
            report = None
        return done.returncode, report, done.stdout[-3000:] + done.stderr[-3000:]

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(jobs, pool.map(one, jobs), strict=True))


def test_the_real_repository_scenarios_are_shipped() -> None:
    assert len(REAL) >= 8, REAL
    families = {name.split("/")[0] for name in REAL}
    assert families == {"go", "py"}
    kinds = {load_scenario(n, SCENARIOS).scenario.classification.type for n in REAL}
    assert kinds == {"build-package", "fix-bug", "feature", "refactor"}
    for name in REAL:
        loaded = load_scenario(name, SCENARIOS)
        repo = loaded.scenario.repo
        assert (SHARED_REPOS / f"{repo}.bundle").is_file() or not SHARED_REPOS.is_dir(), repo
        assert loaded.scenario.solution and loaded.scenario.version
        assert len(list((loaded.directory / "defects").glob("*.patch"))) >= 2, name
        tests_from = loaded.scenario.verify.tests_from
        assert (loaded.directory / "hidden").is_dir() or tests_from, name
        if tests_from:  # the hidden tests stay in the repository, at the fix commit
            assert loaded.scenario.task_date, f"{name}: a mined task records its date"
            assert not (loaded.directory / "hidden").exists(), name
        assert not (loaded.directory / "repo.bundle").exists(), "the repo lives in the cache"


def test_validate_finds_every_commit_in_the_cache(cache: Path, tmp_path: Path) -> None:
    done = harness(["validate", *REAL], tmp_path, cache)
    assert done.returncode == 0, done.stdout + done.stderr
    for name in REAL:
        assert f"valid   {name}" in done.stdout
    assert "skipped" not in done.stdout


def test_mined_scenarios_are_shipped() -> None:
    assert set(MINED_SAMPLE) <= set(MINED)
    repos = {load_scenario(n, SCENARIOS).scenario.repo for n in MINED}
    assert len(MINED) >= 10 and len(repos) >= 6, (len(MINED), sorted(repos))


@pytest.mark.parametrize("name", LOCAL_RUNS)
def test_oracle_succeeds_and_nop_fails(name: str, local_runs: dict) -> None:
    code, report, out = local_runs[(name, "oracle")]
    assert code == 0 and report, out
    assert report["outcome"] == "success" and report["score"] == 1.0, out
    code, report, out = local_runs[(name, "nop")]
    assert code == 1 and report, out
    assert report["outcome"] == "failed" and report["score"] < 0.5, out


@pytest.mark.docker
@pytest.mark.parametrize("name", IN_DOCKER)
def test_oracle_and_nop_in_docker(name: str, cache: Path, tmp_path: Path) -> None:
    from tests._docker import client_or_skip

    client_or_skip()
    ok = harness(["exec", "--agent", "oracle", name], tmp_path / "a", cache)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    report = report_of(tmp_path / "a", name)
    assert report["outcome"] == "success" and report["score"] == 1.0
    bad = harness(["exec", "--agent", "nop", name], tmp_path / "b", cache)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert report_of(tmp_path / "b", name)["outcome"] == "failed"
