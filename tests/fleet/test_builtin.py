"""The built-in fleet: ``--model smollm2-135m`` (or ``gguf:PATH``, or a fleet.yml host of
``kind: engine``) is served by llama.cpp's server that harness starts itself; a Docker
trial against it ends with an honest classification, the tokens the gateway records are
the engine's, the run's fingerprint names the engine build, the GGUF's sha256 and its
quantisation, and the engine is gone once the process ends."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from harness.config.entrants import GGUF_PREFIX, Registry, gguf_model_name
from harness.errors import UserError
from harness.fleet.builtin import materialize
from harness.fleet.config import parse_fleet
from harness.fleet.engine_host import ENGINE_LABEL
from harness.fleet.engine_model import SMOLLM2
from tests._docker import client_or_skip
from tests.conftest import REPO_ROOT
from tests.support.calc import add_entrants, harness, write_calc


@pytest.mark.unit
def test_a_users_gguf_is_an_entrant_for_any_model_using_agent(tmp_path: Path) -> None:
    reg = Registry.load(REPO_ROOT)
    _agent, llm = reg.resolve("mini-swe-agent", f"{GGUF_PREFIX}/models/My Model.Q8_0.gguf")
    assert llm.name == llm.model == "gguf-My-Model.Q8_0" and llm.local
    assert llm.engine == "gguf:/models/My Model.Q8_0.gguf"
    assert gguf_model_name("gguf:x/../a.gguf") == "gguf-a"
    with pytest.raises(UserError, match="uses no model"):
        reg.resolve("oracle", "gguf:/m.gguf")
    builtin = reg.llm("smollm2-135m")
    assert builtin.engine == "builtin" and builtin.model == SMOLLM2.name


@pytest.mark.unit
def test_an_engine_host_needs_a_model_and_an_address_comes_later(tmp_path: Path) -> None:
    cfg = parse_fleet(
        {"hosts": [{"name": "e", "kind": "engine", "model": "builtin"}], "models": {}}
    )
    assert cfg.hosts[0].started is False
    with pytest.raises(UserError, match="needs `model: builtin`"):
        parse_fleet({"hosts": [{"name": "e", "kind": "engine"}]})
    with pytest.raises(UserError, match="base_url is required"):
        parse_fleet({"hosts": [{"name": "h"}]})
    plain = tmp_path / "fleet.yml"
    plain.write_text("hosts:\n  - {name: h, base_url: 'http://10.0.0.1:1234'}\n")
    assert materialize(plain) == plain  # nothing to start: the user's own file


AGENT = """
  - name: toolcall-short
    version: "1.0"
    supports-llms: [smollm2-135m]
    adapter: tests.support.agents:ShortToolCallAgent
"""


@pytest.mark.docker
@pytest.mark.engine
@pytest.mark.integration
def test_a_docker_trial_against_the_built_in_model(project: Path, tmp_path: Path) -> None:
    client = client_or_skip()
    write_calc(project, tmp_path / "src", environment="{image: python, agent-timeout: 120s}")
    add_entrants(project, AGENT)
    assert not (project / "fleet.yml").exists()  # no fleet file: the built-in engine
    res = harness(
        project,
        *("exec", "--agent", "toolcall-short", "--model", "smollm2-135m"),
        *("--sandbox", "docker", "t/calc"),
    )
    # the model answers in text (no tool call edits calc.py): the agent's failure, not an error
    assert res.returncode == 1, res.stdout + res.stderr
    (run,) = [p for p in (project / "results" / "t" / "calc").iterdir() if p.is_dir()]
    usage = json.loads((run / "progress.json").read_text())["usage"]
    rows = [json.loads(x) for x in (run / "gateway" / "telemetry.jsonl").read_text().splitlines()]
    assert [r["status"] for r in rows] == [200] and rows[0]["host"] == "local-engine"
    # the tokens the gateway recorded are the ones the engine reported in its reply
    engine_said = usage["self_reported"]
    assert rows[0]["prompt_tokens"] == engine_said["prompt_tokens"] > 0
    assert rows[0]["completion_tokens"] == engine_said["completion_tokens"] <= 12
    assert rows[0]["engine_timings"]["predicted_per_second"] > 0
    meta = json.loads((run / "run.json").read_text())
    host = meta["fleet"]["identifiers"][SMOLLM2.name]["hosts"]["local-engine"]
    assert host["sha256"] == SMOLLM2.sha256 and host["quantization"] == "Q4_1"
    assert host["engine"].startswith("b") and host["format"] == "gguf"
    # the engine stopped with the process that started it
    port = meta["fleet"]["hosts"]["local-engine"]["base_url"].rsplit(":", 1)[1]
    published = [
        bind["HostPort"]
        for c in client.containers.list(all=True, filters={"label": ENGINE_LABEL})
        for binds in (c.attrs["NetworkSettings"]["Ports"] or {}).values()
        for bind in binds or []
    ]
    assert port not in published


@pytest.mark.unit
def test_a_jobs_trials_share_the_engine_the_job_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.fleet import builtin
    from harness.fleet.engine_host import EngineHost
    from harness.fleet.engine_model import GgufFile

    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv(builtin.ENGINES_ENV, raising=False)
    gguf = GgufFile(tmp_path / "m.gguf", "ab" * 32, "Q8_0")
    started: list[EngineHost] = []
    stopped: list[str] = []

    def start(model: GgufFile, alias: str, **_kw: object) -> EngineHost:
        host = EngineHost("local-engine", alias, model, f"c{len(started)}", "http://127.0.0.1:9",
                          "http://172.17.0.9:8080", 4)  # fmt: skip
        started.append(host)
        return host

    monkeypatch.setattr(builtin, "start_engine", start)
    monkeypatch.setattr(builtin, "model_file", lambda spec, **_kw: gguf)
    monkeypatch.setattr(EngineHost, "stop", lambda self: stopped.append(self.container_id))
    with builtin.job_engines({"gguf-m": "gguf:/x/m.gguf"}) as files:
        # a trial worker inherits the environment: it finds the job's engine, starts none
        assert builtin.engine_fleet_file("gguf-m", "gguf:/x/m.gguf") == Path(files["gguf-m"])
        data = parse_fleet(yaml.safe_load(Path(files["gguf-m"]).read_text()))
        assert data.hosts[0].sha256 == "ab" * 32 and data.hosts[0].quantization == "Q8_0"
        assert data.models["gguf-m"].upstream == "gguf-m"
        assert len(started) == 1
    assert stopped == ["c0"] and not Path(files["gguf-m"]).exists()
    assert builtin.ENGINES_ENV not in os.environ

    # a fleet.yml host of kind engine: started by the job, its address given to the trials
    user = tmp_path / "fleet.yml"
    user.write_text(
        "hosts:\n  - {name: gpu, kind: engine, model: m.gguf}\n"
        "  - {name: lan, base_url: 'http://10.0.0.2:1234'}\n"
        "models:\n  coder: {upstream: {gpu: my-model, lan: q/m}}\n"
    )
    with builtin.job_engines({}, user) as files:
        made = Path(files[builtin.fleet_key(user)])
        assert builtin.materialize(user) == made and len(started) == 2  # no second engine
        hosts = {h.name: h for h in parse_fleet(yaml.safe_load(made.read_text())).hosts}
        assert hosts["gpu"].base_url == "http://127.0.0.1:9" and hosts["gpu"].kind == "engine"
        assert started[-1].alias == "my-model"  # what the fleet's models ask it for
        assert hosts["lan"].base_url == "http://10.0.0.2:1234"
    assert stopped == ["c0", "c1"] and user.read_text().count("kind: engine") == 1
