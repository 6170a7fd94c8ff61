"""Fleet hosts on this machine's loopback (LM Studio on the laptop) work from Docker
trials: the gateway container reaches exactly the loopback ports its fleet names (a relay
each, or the bridge address of the container publishing the port), and nothing else."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
import yaml

from harness.backends.docker.loopback import loopback_port, reach_loopback_hosts
from harness.fleet.router_service import bridge_address
from harness.testing.lmstudio import TestHost
from tests._docker import base_tag, client_or_skip
from tests.gateway.test_trial_gateway import AGENT, LLM
from tests.support.calc import add_entrants, harness, write_calc


@pytest.mark.unit
def test_only_loopback_urls_are_rewritten() -> None:
    assert loopback_port("http://127.0.0.1:1234") == 1234
    assert loopback_port("http://localhost:8080/v1") == 8080
    assert loopback_port("http://[::1]:99") == 99
    assert loopback_port("http://127.0.0.1") == 80
    assert loopback_port("http://192.168.1.20:1234") is None
    assert loopback_port("https://api.example.invalid") is None


@contextlib.contextmanager
def _box(client):  # type: ignore[no-untyped-def]
    """A container on Docker's default bridge (where the gateway sits); yields it and its
    address there."""
    box = client.containers.run(
        base_tag(client),
        ["sleep", "300"],
        detach=True,
        network="bridge",
        labels={"harness": "1", "harness.test": "loopback"},
    )
    try:
        box.reload()
        yield box, box.attrs["NetworkSettings"]["Networks"]["bridge"]["IPAddress"]
    finally:
        box.remove(force=True)


def _curl(box, url: str) -> bytes:  # type: ignore[no-untyped-def]
    """GET ``url`` from ``box``: the HTTP status, or 000 when nothing answered."""
    cmd = ["curl", "-s", "-m", "5", "-o", "/dev/null", "-w", "%{http_code}", url]
    return bytes(box.exec_run(cmd).output)


@pytest.mark.docker
@pytest.mark.integration
def test_a_relay_reaches_its_one_port_and_nothing_else(tmp_path: Path) -> None:
    client = client_or_skip()
    addr = bridge_address()
    if addr == "127.0.0.1":
        pytest.skip("no Docker bridge")
    with (
        TestHost(models=["org/m"]) as given,
        TestHost(models=["org/other"]) as other,  # also on loopback, not in the fleet
    ):
        fleet = tmp_path / "fleet.yml"
        fleet.write_text(
            yaml.safe_dump(
                {
                    "hosts": [
                        {"name": "lms", "base_url": given.url + "/v1"},
                        {"name": "lan", "base_url": "http://192.0.2.7:1234"},
                    ],
                    "models": {"m": {"upstream": "org/m"}},
                }
            )
        )
        relays = reach_loopback_hosts(fleet, client)
        try:
            hosts = yaml.safe_load(fleet.read_text())["hosts"]
            assert len(relays) == 1 and hosts[1]["base_url"] == "http://192.0.2.7:1234"
            relayed = hosts[0]["base_url"]
            assert relayed == f"http://{relays[0].address}/v1" and relayed.startswith(
                f"http://{addr}:"
            )
            with _box(client) as (gateway, ip), _box(client) as (stranger, _):
                assert _curl(gateway, relayed + "/models") == b"000"  # none allowed yet
                relays[0].allow(ip)  # the trial's gateway container
                assert _curl(gateway, relayed + "/models") == b"200"
                assert _curl(stranger, relayed + "/models") == b"000"  # another container
                # the other loopback service stays out of reach from the bridge
                other_port = other.url.rsplit(":", 1)[1]
                assert _curl(gateway, f"http://{addr}:{other_port}/v1/models") == b"000"
                for relay in relays:
                    relay.close()
                assert _curl(gateway, relayed + "/models") == b"000"  # closed with the trial
        finally:
            for relay in relays:
                relay.close()


@pytest.mark.docker
@pytest.mark.integration
def test_a_docker_trial_uses_a_fleet_host_on_loopback(project: Path, tmp_path: Path) -> None:
    """Before the relay, this trial ended ``error`` (exit 3, ``connect_error``): inside
    the gateway container 127.0.0.1 is the container itself."""
    write_calc(project, tmp_path / "src", environment="{image: python, agent-timeout: 120s}")
    add_entrants(project, AGENT.replace("[replay-test]", "[replay-test, lms-model]"), LLM)
    with (project / "llms.yml").open("a") as fh:
        fh.write("  - name: lms-model\n    model: org/m\n    local: true\n")
    with TestHost(models=["org/m"], quant="Q4_K_M", prefill=40000, decode=4000) as lms:
        assert lms.url.startswith("http://127.0.0.1:")
        (project / "fleet.yml").write_text(
            f"hosts:\n  - {{name: lms, base_url: '{lms.url}'}}\n"
            "models:\n  lms-model: {upstream: org/m}\n"
        )
        res = harness(
            project,
            *("exec", "--agent", "toolcall", "--model", "lms-model"),
            *("--sandbox", "docker", "t/calc"),
        )
        served = lms.state.stats["ok"]
    assert res.returncode == 1, res.stdout + res.stderr  # a text answer edits nothing: failed
    (run,) = [p for p in (project / "results" / "t" / "calc").iterdir() if p.is_dir()]
    report = json.loads((run / "verify" / "report.json").read_text())
    assert report["outcome"] == "failed"
    rows = [json.loads(x) for x in (run / "gateway" / "telemetry.jsonl").read_text().splitlines()]
    assert [r["status"] for r in rows] == [200] and rows[0]["host"] == "lms"
    assert rows[0]["prompt_tokens"] > 0 and served == 1  # the host on loopback answered it
