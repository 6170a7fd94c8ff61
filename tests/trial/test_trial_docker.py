"""Trials in Docker: hidden material stays out of the agent's container, timeouts are
recorded, and nothing labelled with the trial survives success, failure, timeout or a
signal."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, make_bundle
from tests.support.signals import interruptible

docker = pytest.importorskip("docker")
pytestmark = [pytest.mark.docker, pytest.mark.integration]

FILES = {
    "calc.py": "def add(a, b):\n    return a - b\n",
    "tests/test_visible.py": "def test_true():\n    assert True\n",
}
HIDDEN = (
    "# HIDDEN-MARKER-t/calc\nfrom calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
)
SOLUTION = """\
diff --git a/calc.py b/calc.py
--- a/calc.py
+++ b/calc.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return a - b
+    return a + b
"""
TEST_AGENTS = """
  - name: probe
    version: "1.0"
    supports-llms: [none]
    adapter: tests.support.agents:ProbeAgent
  - name: sleeper
    version: "1.0"
    supports-llms: [none]
    adapter: tests.support.agents:SleeperAgent
"""


@pytest.fixture(scope="module")
def client():  # type: ignore[no-untyped-def]
    try:
        c = docker.from_env()
        c.ping()
    except Exception as exc:  # pragma: no cover - CI always has an engine
        pytest.fail(f"Docker Engine is required for these tests: {exc}")
    return c


@pytest.fixture
def calc(project: Path, tmp_path: Path) -> Path:
    folder = project / "scenarios" / "t" / "calc"
    folder.mkdir(parents=True)
    sha = make_bundle(tmp_path / "src", folder / "repo.bundle", FILES)
    (folder / "hidden").mkdir()
    (folder / "hidden" / "test_hidden_calc.py").write_text(HIDDEN)
    (folder / "solution.patch").write_text(SOLUTION)
    (folder / "scenario.yml").write_text(
        f"name: calc\nrepo: repo.bundle\ncommit: {sha}\nclassification: {{type: fix-bug}}\n"
        "agent: {instructions: fix add}\nsolution: solution.patch\n"
        "environment: {image: python, agent-timeout: 8s}\n"
        "verify:\n  must-modify: calc.py\n  no-modify: tests\n"
        "  copy: [{from: hidden/test_hidden_calc.py, to: .}]\n"
        "  tests: [test_hidden_calc.py]\n"
    )
    with (project / "agents.yml").open("a") as fh:
        fh.write(TEST_AGENTS)
    return folder


def env_for(project: Path) -> dict[str, str]:
    return {
        **os.environ,
        "HARNESS_SCENARIO_ROOT": str(project / "scenarios"),
        "PYTHONPATH": str(REPO_ROOT),
    }


def harness(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", *args],
        cwd=project,
        env=env_for(project),
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )


def one_run(project: Path) -> Path:
    runs = list((project / "results" / "t" / "calc").iterdir())
    assert len(runs) == 1
    return runs[0]


def leftovers(client, run_id: str) -> list[str]:  # type: ignore[no-untyped-def]
    flt = {"label": f"harness.trial={run_id}"}
    return [c.name for c in client.containers.list(all=True, filters=flt)] + [
        n.name for n in client.networks.list(filters=flt)
    ]


@pytest.mark.parametrize(
    ("agent", "code", "outcome"), [("oracle", 0, "success"), ("nop", 1, "failed")]
)
def test_exec_in_docker(
    client,
    calc: Path,
    project: Path,
    agent: str,
    code: int,  # type: ignore[no-untyped-def]
    outcome: str,
) -> None:
    res = harness(project, "exec", "--agent", agent, "t/calc")
    assert res.returncode == code, res.stdout + res.stderr
    run = one_run(project)
    report = json.loads((run / "verify" / "report.json").read_text())
    meta = json.loads((run / "run.json").read_text())
    assert report["outcome"] == outcome
    assert meta["images"]["agent"].startswith("sha256:")
    assert meta["images"]["verify"].startswith("sha256:")
    assert leftovers(client, meta["run_id"]) == []


def test_hidden_material_never_in_agent_container(client, calc: Path, project: Path) -> None:  # type: ignore[no-untyped-def]
    res = harness(project, "exec", "--agent", "probe", "t/calc")
    assert res.returncode == 1, res.stdout + res.stderr  # probe changes nothing: failed
    run = one_run(project)
    probe = json.loads((run / "agent" / "probe.json").read_text())
    assert "test_hidden_calc.py" in probe["names"] and "solution.patch" in probe["names"]
    assert probe["found"] == []
    report = json.loads((run / "verify" / "report.json").read_text())
    # ... while the verifier had it: the hidden test ran there
    assert report["hidden_files"] == ["test_hidden_calc.py"]
    cases = report["tests"][-1]["cases"]  # one row per target, its tests nested
    assert cases and cases[0]["name"].endswith("test_add")
    assert not (project / "workspace" / "t" / "calc" / "test_hidden_calc.py").exists()


def test_agent_timeout_is_recorded_and_cleaned(client, calc: Path, project: Path) -> None:  # type: ignore[no-untyped-def]
    res = harness(project, "exec", "--agent", "sleeper", "t/calc")
    assert res.returncode == 1, res.stdout + res.stderr
    run = one_run(project)
    report = json.loads((run / "verify" / "report.json").read_text())
    assert report["outcome"] == "timeout"
    phases = json.loads((run / "progress.json").read_text())["phases"]
    assert phases[0]["outcome"] == "timeout"
    assert leftovers(client, report["run_id"]) == []


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_removes_containers(client, calc: Path, project: Path, sig: int) -> None:  # type: ignore[no-untyped-def]
    (calc / "scenario.yml").write_text(
        (calc / "scenario.yml").read_text().replace("agent-timeout: 8s", "agent-timeout: 600s")
    )
    cmd = [sys.executable, "-m", "harness.cli", "exec", "--agent", "sleeper", "t/calc"]
    proc = subprocess.Popen(
        interruptible(cmd),
        cwd=project,
        env=env_for(project),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 300
        started: list[Path] = []
        while time.monotonic() < deadline and not started:
            started = list((project / "results").glob("t/calc/*/agent/started"))
            time.sleep(0.5)
        assert started, "the agent never started"
        run_id = started[0].parents[1].name
        assert client.containers.list(filters={"label": f"harness.trial={run_id}"})
        proc.send_signal(sig)
        _out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode in (130, 143), err
    assert "Traceback" not in err
    assert leftovers(client, run_id) == []
    phases = json.loads((started[0].parents[1] / "progress.json").read_text())["phases"]
    assert phases[-1]["outcome"] == "interrupted"
