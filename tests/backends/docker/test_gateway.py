"""A trial's gateway container enforces the trial's budget: a call past it gets HTTP 429
``budget_exceeded``, telemetry has the ``budget`` row, and ``budget_state()`` reads
``GET /v1/harness/budget`` from inside the container."""

import json
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from harness.backends.docker.gateway import TrialGateway
from harness.config.budget import Budget
from harness.config.entrants import LLMEntry
from harness.fleet.telemetry import read_jsonl

pytestmark = [pytest.mark.docker, pytest.mark.integration]

CALL = """
import json, sys, urllib.request, urllib.error
req = urllib.request.Request(
    "http://127.0.0.1:8080/v1/chat/completions",
    data=json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode(),
    headers={"Authorization": "Bearer " + sys.argv[1], "Content-Type": "application/json"},
)
try:
    r = urllib.request.urlopen(req, timeout=10)
    print(json.dumps({"status": r.status}))
except urllib.error.HTTPError as e:
    print(json.dumps({"status": e.code, "body": json.loads(e.read())}))
"""


def _bridge_or_skip() -> str:
    """The Docker bridge address, where a test host is reachable from gateway containers."""
    from harness.fleet.router_service import bridge_address

    addr = bridge_address()
    if addr == "127.0.0.1":
        pytest.skip("no Docker bridge")
    return addr


def _fleet_file(tmp_path: Path, url: str) -> tuple[dict[str, Any], Path]:
    """A fleet of one host ``h`` at ``url`` serving model ``m``, and its file."""
    fleet = {"hosts": [{"name": "h", "base_url": url}], "models": {"m": {"upstream": "org/m"}}}
    path = tmp_path / "fleet.yml"
    path.write_text(json.dumps(fleet))
    return fleet, path


def test_container_gateway_refuses_calls_past_the_budget(tmp_path: Path) -> None:
    docker = pytest.importorskip("docker")
    client = docker.from_env()
    label = {"harness.test": "fleet-budget"}
    net = client.networks.create(
        f"harness-test-{uuid.uuid4().hex[:8]}", internal=True, labels=label
    )
    cassette = tmp_path / "c.jsonl"
    reply = {
        "request": {},
        "response": {
            "content": "ok",
            "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
        },
    }
    cassette.write_text("\n".join(json.dumps(reply) for _ in range(3)) + "\n")
    gw = TrialGateway(
        trial="trial-c",
        agent="a",
        llm=LLMEntry(name="m", model="m"),
        network=net.name,
        labels=label,
        replay=cassette,
        budget=Budget(calls=1),
    )
    try:
        gw.start()
        out = []
        for _ in range(2):
            res = gw.sandbox.exec(["python3", "-c", CALL, gw.key], timeout=30)
            assert res.ok, res.stderr
            out.append(json.loads(res.stdout))
        assert out[0]["status"] == 200
        assert out[1]["status"] == 429 and out[1]["body"]["error"]["code"] == "budget_exceeded"
        state = gw.budget_state()
        assert state["exhausted"] == "calls" and state["used"]["calls"] == 1
        assert state["used"]["tokens"] == 7
        usage = gw.collect(tmp_path / "out")
        rows = read_jsonl(tmp_path / "out" / "telemetry.jsonl")
        assert [r["status"] for r in rows] == [200, "budget"]
        assert usage["calls"] == 1 and usage["budget_refusals"] == 1
    finally:
        gw.stop()
        net.remove()


def test_container_gateways_lease_hosts_from_the_job_router(tmp_path: Path) -> None:
    """Two trial gateway containers, each on its own internal network, share one router
    that runs in this process on the Docker bridge address (as ``job_router`` starts it)."""
    docker = pytest.importorskip("docker")
    from harness.fleet.config import parse_fleet
    from harness.fleet.router_service import RouterService
    from harness.testing.lmstudio import TestHost

    addr = _bridge_or_skip()
    client = docker.from_env()
    label = {"harness.test": "fleet-router"}
    with TestHost(host=addr, models=["org/m"], prefill=1e6, decode=1e5) as host:
        fleet, fleet_file = _fleet_file(tmp_path, host.url)
        with RouterService(parse_fleet(fleet), host=addr) as service:
            gws, nets = [], []
            try:
                for i in range(2):
                    net = client.networks.create(
                        f"harness-test-{uuid.uuid4().hex[:8]}", internal=True, labels=label
                    )
                    nets.append(net)
                    gw = TrialGateway(
                        trial=f"trial-{i}",
                        agent="a",
                        llm=LLMEntry(name="m", model="m"),
                        network=net.name,
                        labels=label,
                        fleet_file=fleet_file,
                        router_url=service.url,
                    )
                    gws.append(gw)
                    gw.start()
                    res = gw.sandbox.exec(["python3", "-c", CALL, gw.key], timeout=30)
                    assert res.ok and json.loads(res.stdout)["status"] == 200, res.stdout
                snap = service.routing.snapshot_now()
                for i, gw in enumerate(gws):
                    usage = gw.collect(tmp_path / f"out-{i}")
                    assert usage["calls"] == 1
            finally:
                for gw in gws:
                    gw.stop()
                for net in nets:
                    net.remove()
    assert snap["h"]["calls"] == 2 and snap["h"]["inflight"] == 0


def test_a_call_in_flight_when_the_turn_ends_is_written_cut_not_lost(tmp_path: Path) -> None:
    """The agent is stopped (or times out) in the middle of a call: reading the gateway's
    record ends the gateway first, so that call is in the telemetry as cut (incomplete),
    with the host it ran on, instead of vanishing with the container."""
    docker = pytest.importorskip("docker")
    from harness.testing.lmstudio import TestHost

    addr = _bridge_or_skip()
    client = docker.from_env()
    label = {"harness.test": "fleet-cut"}
    # a prefill of ~60 s: the call is still running when the turn ends
    with TestHost(host=addr, models=["org/m"], prefill=1.0, decode=1e5) as host:
        _, fleet_file = _fleet_file(tmp_path, host.url)
        net = client.networks.create(
            f"harness-test-{uuid.uuid4().hex[:8]}", internal=True, labels=label
        )
        gw = TrialGateway(
            trial="trial-cut",
            agent="a",
            llm=LLMEntry(name="m", model="m"),
            network=net.name,
            labels=label,
            fleet_file=fleet_file,
        )
        try:
            gw.start()
            call = CALL.replace("timeout=10", "timeout=120").replace('"hi"', '"hi " * 60')
            started = gw.sandbox.exec(
                ["sh", "-c", f"nohup python3 -c '{call}' {gw.key} >/dev/null 2>&1 &"], timeout=30
            )
            assert started.ok, started.stderr
            time.sleep(3)  # the call has reached the host and is prefilling
            t0 = time.monotonic()
            usage = gw.collect(tmp_path / "out")
            took = time.monotonic() - t0
        finally:
            gw.stop()
            net.remove()
    rows = read_jsonl(tmp_path / "out" / "telemetry.jsonl")
    assert len(rows) == 1, rows
    assert rows[0]["host"] == "h" and rows[0]["incomplete"] is True, rows[0]
    assert rows[0]["trial"] == "trial-cut"
    assert usage["incomplete"] == 1
    assert took < 20
