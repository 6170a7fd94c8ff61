"""Job files: the flags' fields (kept in the job folder; a bad field is one line, exit 2,
nothing written), ``--agent-env``/``--agent-arg`` reaching the agent and run.json,
``--concurrency 0`` refused, and the last line counting every trial of a resumed job."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.job.jobfile import JobFile, agent_env, load_job_file
from tests.support.job_env import job_env

AGENTS = """
  - name: echoargs
    version: "1.0"
    supports-llms: [none]
    adapter: tests.support.jobs_agents:EchoArgs
"""


@pytest.mark.unit
def test_a_job_file_takes_the_flags_fields(tmp_path: Path) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(
        "agents: oracle,nop\nscenarios: ['py/*']\nexclude: [py/b]\nlimit: 2\nreps: 3\n"
        "max-interruptions: 4\nagent-env: [A=1]\nagent-arg: --fast\nreplay: tape.jsonl\n"
    )
    job = load_job_file(path)
    assert job.agents == ["oracle", "nop"] and job.scenarios == ["py/*"]
    assert (job.limit, job.reps, job.max_interruptions) == (2, 3, 4)
    assert job.agent_env == ["A=1"] and job.agent_arg == ["--fast"]
    assert job.replay == tmp_path / "tape.jsonl"  # relative to the file
    assert JobFile() == load_job_file(_write(tmp_path / "empty.yaml", ""))
    assert agent_env(["A=1", "B=x=y"]) == {"A": "1", "B": "x=y"}


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


@pytest.mark.unit
@pytest.mark.parametrize(
    ("text", "field", "fix"),
    [
        ("agentz: [nop]\n", "agentz", "did you mean 'agents'?"),
        ("reps: 0\n", "reps", "harness run --help"),
        ("concurrency: many\n", "concurrency", "harness run --help"),
    ],
)
def test_a_bad_field_is_one_line_naming_file_field_and_fix(
    tmp_path: Path, text: str, field: str, fix: str
) -> None:
    path = _write(tmp_path / "job.yaml", text)
    with pytest.raises(Exception) as err:
        load_job_file(path)
    line = err.value.one_line()  # type: ignore[attr-defined]
    assert str(path) in line and field in line and fix in line and "\n" not in line


@pytest.fixture
def env(project: Path, tmp_path: Path) -> dict[str, str]:
    return job_env(project, tmp_path, AGENTS)


def _run(project: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "tests.support.jobs_agents", "run", *args]
    return subprocess.run(cmd, cwd=project, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.integration
def test_a_job_file_runs_keeps_and_passes_env_and_args(
    project: Path, env: dict[str, str], tmp_path: Path
) -> None:
    job_file = _write(
        tmp_path / "echo.yaml",
        "agents: [echoargs]\nscenarios: ['smoke/*']\nexclude: [smoke/go-*]\nlimit: 1\n"
        "sandbox: local\njob: echo\nagent-env: [GREETING=hello, API_KEY=s3cret]\n"
        "agent-arg: [--steps, '40']\n",
    )
    done = _run(project, env, "-c", str(job_file))
    assert done.returncode == 0, done.stdout + done.stderr
    last = done.stdout.strip().splitlines()[-1]  # nop-like: the smoke test fails
    assert last == "job echo finished: 1 trial(s): failed 1 (this run: failed 1)", last
    job = tmp_path / "jobs" / "echo"
    assert (job / "job.yaml").read_text() == job_file.read_text()  # kept with the job
    (run,) = [p.parent for p in (tmp_path / "results").rglob("run.json")]
    meta = json.loads((run / "run.json").read_text())
    assert meta["scenario"] == "smoke/py-fast"
    assert meta["agent_env"] == {"GREETING": "hello", "API_KEY": "***"}  # a secret masked
    assert meta["agent_args"] == ["--steps", "40"]
    assert (run / "agent" / "stdout.txt").read_text().strip() == "env=hello args=--steps 40"
    again = _run(project, env, "-c", str(job_file))  # resumed: nothing new, all counted
    assert again.returncode == 0, again.stdout + again.stderr
    last = again.stdout.strip().splitlines()[-1]
    assert last == "job echo finished: 1 trial(s): failed 1 (this run: nothing new)", last


@pytest.mark.integration
def test_bad_input_to_run_is_exit_2_and_writes_nothing(
    project: Path, env: dict[str, str], tmp_path: Path
) -> None:
    bad = _write(tmp_path / "bad.yaml", "agents: [echoargs]\nscenarioz: [py/*]\n")
    cases = [
        (["-c", str(bad)], "scenarioz"),
        (["--agents", "echoargs", "--scenarios", "smoke/*", "--concurrency", "0"], "--concurrency"),
        (["--agents", "echoargs", "--scenarios", "nope/*", "--sandbox", "local"], "nope/*"),
        (["--agents", "echoargs", "--scenarios", "smoke/py-fast", "--agent-env", "X"], "KEY=VALUE"),
    ]
    for args, named in cases:
        done = _run(project, env, *args)
        assert done.returncode == 2, (args, done.stdout + done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and named in lines[0], (args, done.stderr)
    assert not (tmp_path / "jobs").exists() or not any((tmp_path / "jobs").iterdir())
    assert not (tmp_path / "results").exists()


@pytest.mark.integration
def test_exec_passes_agent_env_and_args_too(
    project: Path, env: dict[str, str], tmp_path: Path
) -> None:
    cmd = [sys.executable, "-m", "harness.cli", "exec", "smoke/py-fast", "--agent", "echoargs"]
    cmd += ["--sandbox", "local", "--agent-env", "GREETING=hi", "--agent-arg", "-v"]
    done = subprocess.run(cmd, cwd=project, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode in (0, 1), done.stdout + done.stderr  # graded either way
    (run,) = [p.parent for p in (tmp_path / "results").rglob("run.json")]
    meta = json.loads((run / "run.json").read_text())
    assert (meta["agent_env"], meta["agent_args"]) == ({"GREETING": "hi"}, ["-v"])
    assert (run / "agent" / "stdout.txt").read_text().strip() == "env=hi args=-v"
    bad = subprocess.run([*cmd, "--agent-env", "=x"], cwd=project, env=env, capture_output=True,
                         text=True, timeout=600)  # fmt: skip
    assert bad.returncode == 2 and "KEY=VALUE" in bad.stderr
