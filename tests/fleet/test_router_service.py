"""One router per job: trial gateways that share one routing state (a ``RouterService``)
while each keeps its own address, key and telemetry file; and the router fixes that show
through a gateway (LM Studio v0 slots, finish_reason, /health behind the key)."""

import json
import os

import httpx
import openai
import pytest

from harness.fleet.config import parse_fleet
from harness.fleet.router_service import ROUTER_ENV, RouterService, job_router
from harness.fleet.telemetry import read_jsonl
from harness.gateway import GatewayServer
from harness.testing.lmstudio import TestHost
from harness.util.serving import bind_socket

pytestmark = pytest.mark.integration

MODEL = "org/coder"
MSG = [{"role": "user", "content": "hello " * 50}]


def dead_url():
    sock = bind_socket("127.0.0.1", 0)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    sock.close()
    return url


def fleet(**hosts):
    return parse_fleet(
        {
            "hosts": [
                {"name": n, "base_url": u if isinstance(u, str) else u.url, "max_parallel": 2}
                for n, u in hosts.items()
            ],
            "models": {"coder": {"upstream": MODEL}},
            "routing": {"cooldown": {"base_s": 30, "max_s": 60}},
        }
    )


@pytest.fixture(scope="module")
def ok_host():
    with TestHost(models=[MODEL], prefill=1e6, decode=1e5) as h:
        yield h


def test_trial_gateways_share_cooldowns_and_load(ok_host, tmp_path):
    # "dead" is seeded as the fastest host, so a router of its own tries it first
    cfg = fleet(dead=dead_url(), ok=ok_host)
    bench = {"dead": {"prefill_tps": 1e6, "decode_tps": 1e5}, "ok": {"prefill_tps": 10.0}}
    with RouterService(cfg, bench=bench) as service:
        gws = [
            GatewayServer(cfg, telemetry=tmp_path / f"t{i}.jsonl", router_url=service.url)
            for i in (1, 2)
        ]
        with gws[0], gws[1]:
            keys = [gw.issue_key(f"trial-{i}") for i, gw in enumerate(gws, 1)]
            for gw, key in zip(gws, keys, strict=True):
                c = openai.OpenAI(base_url=gw.base_url, api_key=key, max_retries=0)
                c.chat.completions.create(model="coder", messages=MSG, max_tokens=3)
        snap = service.routing.snapshot_now()
    one = read_jsonl(tmp_path / "t1.jsonl")
    two = read_jsonl(tmp_path / "t2.jsonl")
    # trial 1 met the dead host and cooled it down for the whole job ...
    assert [(r["host"], r["status"]) for r in one] == [("dead", "connect_error"), ("ok", 200)]
    # ... so trial 2, on its own gateway, went straight to the live one
    assert [(r["host"], r["status"]) for r in two] == [("ok", 200)]
    assert {r["trial"] for r in one} == {"trial-1"} and {r["trial"] for r in two} == {"trial-2"}
    assert snap["ok"]["calls"] == 2 and snap["dead"]["incidents"] == 1
    assert snap["ok"]["inflight"] == 0 and snap["dead"]["inflight"] == 0


def test_job_router_names_itself_to_the_trials(ok_host, tmp_path):
    path = tmp_path / "fleet.yml"
    path.write_text(
        json.dumps(
            {
                "hosts": [{"name": "ok", "base_url": ok_host.url}],
                "models": {"coder": {"upstream": MODEL}},
            }
        )
    )
    with job_router(path, host="127.0.0.1") as url:
        assert url and os.environ[ROUTER_ENV] == url
        assert httpx.get(url + "/health").json() == {"ok": True}
    assert ROUTER_ENV not in os.environ
    with job_router(None) as url:
        assert url is None


def test_v0_host_slots_from_configuration(tmp_path):
    with TestHost(models=[MODEL], api_v1=False, parallel=4) as v0:
        configured = parse_fleet(
            {
                "hosts": [
                    {"name": "v0", "base_url": v0.url, "max_parallel": 4},
                    {"name": "v0-bare", "base_url": v0.url},
                ],
                "models": {"coder": {"upstream": MODEL}},
            }
        )
        with GatewayServer(configured, require_keys=False) as gw:
            assert gw.gateway.statuses["v0"].api == "lmstudio-v0"
            hosts = gw.hosts()
    assert hosts["v0"]["slots"] == 4  # from the configuration
    assert hosts["v0-bare"]["slots"] == 1  # unknown: learned from measured concurrency


def test_non_streamed_reply_keeps_the_upstream_finish_reason(ok_host):
    with GatewayServer(fleet(ok=ok_host)) as gw:
        c = openai.OpenAI(base_url=gw.base_url, api_key=gw.issue_key("t"), max_retries=0)
        r = c.chat.completions.create(model="coder", messages=MSG, max_tokens=3)
        assert r.choices[0].finish_reason == "length"
        tools = [{"type": "function", "function": {"name": "bash", "parameters": {}}}]
        r = c.chat.completions.create(
            model="coder", messages=MSG, max_tokens=30, tools=tools, tool_choice="required"
        )
        assert r.choices[0].finish_reason == "tool_calls"


def test_health_is_bare_without_the_key(ok_host):
    with GatewayServer(fleet(ok=ok_host)) as gw:
        key = gw.issue_key("t")
        assert httpx.get(gw.url + "/health").json() == {"ok": True}
        assert httpx.get(gw.url + "/health", headers={"Authorization": "Bearer nope"}).json() == {
            "ok": True
        }
        full = httpx.get(gw.url + "/health", headers={"Authorization": f"Bearer {key}"}).json()
        assert full["ok"] is True and "ok" in full["hosts"]
    with GatewayServer(fleet(ok=ok_host), require_keys=False) as gw:  # no keys: all of it
        assert "ok" in httpx.get(gw.url + "/health").json()["hosts"]
