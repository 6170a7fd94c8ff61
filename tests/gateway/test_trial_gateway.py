"""Model-using trials: the gateway runs beside the agent (a container on its internal
network, or a thread for --sandbox local); usage comes from the gateway's telemetry."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.calc import add_entrants, harness, write_calc

pytestmark = pytest.mark.integration

AGENT = """
  - name: toolcall
    version: "1.0"
    supports-llms: [replay-test]
    adapter: tests.support.agents:ToolCallAgent
"""
LLM = """
  - name: replay-test
    model: replay-model-1
"""


def cassette(path: Path, command: str) -> Path:
    path.write_text(
        json.dumps(
            {
                "request": {
                    "model": "replay-model-1",
                    "last_message": {"content": {"$contains": "fix add"}},
                },
                "response": {
                    "tool_calls": [{"name": "bash", "arguments": {"command": command}}],
                    "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150},
                },
            }
        )
        + "\n"
    )
    return path


@pytest.fixture
def scenario(project: Path, tmp_path: Path) -> Path:
    folder = write_calc(
        project, tmp_path / "src", environment="{image: python, agent-timeout: 120s}"
    )
    add_entrants(project, AGENT, LLM)
    return folder


def the_run(project: Path) -> Path:
    (run,) = list((project / "results" / "t" / "calc").iterdir())
    return run


@pytest.mark.parametrize("sandbox", [pytest.param("docker", marks=pytest.mark.docker), "local"])
def test_cassette_drives_a_passing_trial(
    project: Path, scenario: Path, tmp_path: Path, sandbox: str
) -> None:
    tape = cassette(tmp_path / "fix.jsonl", "sed -i 's/a - b/a + b/' calc.py")
    res = harness(
        project,
        "exec",
        "--agent",
        "toolcall",
        "--model",
        "replay-test",
        "--replay",
        str(tape),
        "--sandbox",
        sandbox,
        "t/calc",
    )
    assert res.returncode == 0, res.stdout + res.stderr
    run = the_run(project)
    usage = json.loads((run / "progress.json").read_text())["usage"]
    assert usage["calls"] == 1
    assert usage["prompt_tokens"] == 120 and usage["completion_tokens"] == 30
    assert usage["self_reported"]["total_tokens"] == 150
    assert "self_report_disagrees" not in usage
    lines = (run / "gateway" / "telemetry.jsonl").read_text().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["trial"] == run.name
    meta = json.loads((run / "run.json").read_text())
    if sandbox == "docker":
        assert meta["images"]["gateway"].startswith("sha256:")


@pytest.mark.docker
def test_wrong_edit_is_a_failed_trial_not_an_error(
    project: Path, scenario: Path, tmp_path: Path
) -> None:
    tape = cassette(tmp_path / "wrong.jsonl", "sed -i 's/a - b/a * b/' calc.py")
    res = harness(
        project,
        "exec",
        "--agent",
        "toolcall",
        "--model",
        "replay-test",
        "--replay",
        str(tape),
        "t/calc",
    )
    assert res.returncode == 1, res.stdout + res.stderr
    report = json.loads((the_run(project) / "verify" / "report.json").read_text())
    assert report["outcome"] == "failed"


def test_model_without_fleet_or_cassette_is_refused(project: Path, scenario: Path) -> None:
    res = harness(
        project,
        "exec",
        "--agent",
        "toolcall",
        "--model",
        "replay-test",
        "--sandbox",
        "local",
        "t/calc",
    )
    assert res.returncode == 2 and "fleet" in res.stderr and "--replay" in res.stderr
    assert not (project / "results").exists() or not any((project / "results").rglob("*.json"))


FLEET_LLM = """
  - name: qwen-local
    model: org/m
    local: true
"""


def test_local_trial_through_a_heterogeneous_fleet(project: Path, scenario: Path) -> None:
    """Two test hosts serve one identifier at different quantizations: the run records
    the fleet fingerprint, and its usage is what the hosts reported."""
    from harness.testing.lmstudio import TestHost

    agents = project / "agents.yml"
    agents.write_text(agents.read_text().replace("[replay-test]", "[replay-test, qwen-local]"))
    with (project / "llms.yml").open("a") as fh:
        fh.write(FLEET_LLM)
    with (
        TestHost(models=["org/m"], quant="Q4_K_M", prefill=40000, decode=4000) as a,
        TestHost(models=["org/m"], quant="Q8_0", prefill=20000, decode=2000) as b,
    ):
        (project / "fleet.yml").write_text(
            f"hosts:\n  - {{name: a, base_url: '{a.url}', watts: 100}}\n"
            f"  - {{name: b, base_url: '{b.url}', watts: 300}}\n"
            "models:\n  qwen-local: {upstream: org/m}\nprice_per_kwh: 0.5\n"
        )
        res = harness(
            project,
            "exec",
            "--agent",
            "toolcall",
            "--model",
            "qwen-local",
            "--sandbox",
            "local",
            "t/calc",
        )
    assert res.returncode == 1, res.stdout + res.stderr  # a text answer edits nothing
    run = the_run(project)
    meta = json.loads((run / "run.json").read_text())
    assert meta["fleet"]["heterogeneous"] is True
    assert meta["fleet"]["identifiers"]["org/m"]["differs"] == ["quantization"]
    usage = json.loads((run / "progress.json").read_text())["usage"]
    lines = [json.loads(x) for x in (run / "gateway" / "telemetry.jsonl").read_text().splitlines()]
    assert usage["calls"] == 1 and len(lines) >= 1
    assert usage["prompt_tokens"] == sum(x["prompt_tokens"] for x in lines) > 0
    assert usage["completion_tokens"] == usage["self_reported"]["completion_tokens"]
    assert usage["energy_kwh"] > 0
