"""The gateway against real test hosts on 127.0.0.1 (uvicorn in threads), driven by the
official openai client: usage, failover, cooldown, Retry-After, mid-stream drops, keys,
record and replay."""

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import openai
import pytest

from harness.fleet.config import parse_fleet
from harness.gateway import GatewayServer
from harness.testing.lmstudio import Faults, TestHost
from harness.util.serving import bind_socket

pytestmark = pytest.mark.integration

MODEL = "org/coder"


def fleet_for(*hosts, routing=None, **extra):
    data = {
        "hosts": [
            {"name": n, "base_url": h.url if hasattr(h, "url") else h, "watts": 200}
            for n, h in hosts
        ],
        "models": {"coder": {"upstream": MODEL}},
        "routing": {"cooldown": {"base_s": 0.3, "max_s": 2}, "max_wait_s": 3, **(routing or {})},
        "price_per_kwh": 0.5,
        **extra,
    }
    return parse_fleet(data)


def client(gw, key, **kw):
    return openai.OpenAI(base_url=gw.base_url, api_key=key, max_retries=0, timeout=30, **kw)


def closed_port_url():
    sock = bind_socket("127.0.0.1", 0)
    port = sock.getsockname()[1]
    sock.close()
    return f"http://127.0.0.1:{port}"


@pytest.fixture
def host():
    with TestHost(models=[MODEL], prefill=20000, decode=2000) as h:
        yield h


def test_openai_client_chat_usage_matches_host(host, tmp_path):
    tele = tmp_path / "telemetry.jsonl"
    with GatewayServer(
        fleet_for(("h", host)),
        telemetry=tele,
        prices={"coder": {"input": 1.0, "cached_input": 0.1, "output": 2.0}},
    ) as gw:
        c = client(gw, gw.issue_key("trial-1", "mini", "coder"))
        msgs = [{"role": "user", "content": "word " * 400}]
        r = c.chat.completions.create(model="coder", messages=msgs, max_tokens=12)
        assert r.choices[0].message.content.startswith("alpha beta")
        assert r.model == "coder" and r.usage.completion_tokens == 12
        # streamed, asking for usage; the same prefix is now cached on the host
        chunks = list(
            c.chat.completions.create(
                model="coder",
                messages=msgs,
                max_tokens=12,
                stream=True,
                stream_options={"include_usage": True},
            )
        )
        text = "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices)
        assert text == r.choices[0].message.content
        usage = chunks[-1].usage
        assert usage.prompt_tokens_details.cached_tokens > 0
        # streamed without asking for usage: the gateway asked upstream, the client sees none
        plain = list(
            c.chat.completions.create(model="coder", messages=msgs, max_tokens=5, stream=True)
        )
        assert all(ch.usage is None and ch.choices for ch in plain)

    rows = [json.loads(x) for x in tele.read_text().splitlines()]
    assert len(rows) == 3 and all(r["status"] == 200 for r in rows)
    assert rows[0]["prompt_tokens"] == r.usage.prompt_tokens
    assert rows[0]["completion_tokens"] == r.usage.completion_tokens
    assert rows[1]["prompt_tokens"] == usage.prompt_tokens
    assert rows[1]["cached_tokens"] == usage.prompt_tokens_details.cached_tokens
    assert rows[2]["completion_tokens"] == 5  # usage seen although the client did not ask
    assert host.stats["prefill_tokens"] + host.stats["cached_tokens"] == sum(
        x["prompt_tokens"] for x in rows
    )
    for row in rows:
        assert row["trial"] == "trial-1" and row["agent"] == "mini"
        assert row["host"] == "h" and row["upstream"] == MODEL and row["artefact"] == "Q4_K_M"
        assert 0 < row["ttft_s"] <= row["total_s"]
        assert row["energy_kwh"] > 0 and row["cost_usd"] > row["token_cost_usd"] > 0
    assert rows[0]["prefill_tps"] > 0 and rows[0]["decode_tps"] > 0
    u = gw.trial_usage("trial-1")
    assert u["calls"] == 3 and u["completion_tokens"] == 12 + 12 + 5
    assert u["cost_usd"] == pytest.approx(sum(x["cost_usd"] for x in rows))
    assert u["energy_kwh"] > 0 and u["wall_seconds"] > 0


def test_completions_embeddings_responses_and_models(host):
    with GatewayServer(
        fleet_for(("h", host), models={"coder": {"upstream": MODEL, "aliases": ["gpt-4o"]}})
    ) as gw:
        c = client(gw, gw.issue_key("t", "aider", "coder"))
        assert {m.id for m in c.models.list()} == {"coder", "gpt-4o"}
        assert c.completions.create(model="gpt-4o", prompt="abc", max_tokens=3).choices[0].text
        chunks = list(c.completions.create(model="coder", prompt="abc", max_tokens=3, stream=True))
        assert "".join(ch.choices[0].text for ch in chunks if ch.choices).strip()
        e = c.embeddings.create(model="coder", input=["one", "two"])
        assert len(e.data) == 2 and e.usage.prompt_tokens == 2
        assert c.responses.create(model="coder", input="hi", max_output_tokens=3).output_text
        events = [
            ev.type
            for ev in c.responses.create(
                model="coder", input="hi", max_output_tokens=3, stream=True
            )
        ]
        assert events[-1] == "response.completed"
        # a name the agent hard-codes reaches the key's model
        r = c.chat.completions.create(
            model="claude-3-opus", messages=[{"role": "user", "content": "x"}], max_tokens=2
        )
        assert r.choices[0].message.content
        usage = gw.trial_usage("t")
        assert usage["calls"] == 6 and usage["failed_attempts"] == 0
        assert {x["endpoint"] for x in gw.telemetry("t")} == {
            "/v1/completions",
            "/v1/embeddings",
            "/v1/responses",
            "/v1/chat/completions",
        }


def test_keys_are_required_and_unknown_models_refused(host):
    with GatewayServer(fleet_for(("h", host))) as gw:
        with pytest.raises(openai.AuthenticationError):
            client(gw, "nope").chat.completions.create(model="coder", messages=[])
        c = client(gw, gw.issue_key("t", None, None))
        with pytest.raises(openai.NotFoundError, match="not served"):
            c.chat.completions.create(model="ghost", messages=[{"role": "user", "content": "x"}])


def test_keys_file_is_reread(host, tmp_path):
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({"k1": {"trial": "t1", "agent": "a", "model": "coder"}}))
    with GatewayServer(fleet_for(("h", host)), keys_file=keys) as gw:
        msg = [{"role": "user", "content": "x"}]
        client(gw, "k1").chat.completions.create(model="coder", messages=msg, max_tokens=1)
        keys.write_text(json.dumps({"k2": {"trial": "t2"}}))
        client(gw, "k2").chat.completions.create(model="coder", messages=msg, max_tokens=1)
        with pytest.raises(openai.AuthenticationError):  # gone from the file: revoked
            client(gw, "k1").chat.completions.create(model="coder", messages=msg)
        issued = gw.issue_key("t3")  # issued in process: kept whatever the file says
        client(gw, issued).chat.completions.create(model="coder", messages=msg, max_tokens=1)
        assert [r["trial"] for r in gw.telemetry()] == ["t1", "t2", "t3"]


def test_failover_burst_on_a_heterogeneous_fleet():
    """Three hosts (350, 1200, 2200 prefill tok/s), the fastest failing half its calls:
    every call completes, every attempt has a line, the failing host cools down."""
    with (
        TestHost(models=[MODEL], prefill=350 * 20, decode=4000, parallel=2) as slow,
        TestHost(models=[MODEL], prefill=1200 * 20, decode=4000, parallel=2) as mid,
        TestHost(
            models=[MODEL],
            prefill=2200 * 20,
            decode=4000,
            parallel=2,
            faults=Faults(error_rate=0.5, seed=7),
        ) as fast,
    ):
        cfg = fleet_for(("slow", slow), ("mid", mid), ("fast", fast))
        with GatewayServer(cfg) as gw:
            keys = [gw.issue_key(f"trial-{i}", "agent", "coder") for i in range(6)]

            def one(i):
                c = client(gw, keys[i % 6])
                kwargs = {"stream": True} if i % 2 else {}
                r = c.chat.completions.create(
                    model="coder",
                    max_tokens=8,
                    messages=[{"role": "user", "content": f"task {i} " + "x " * 2000}],
                    **kwargs,
                )
                if i % 2:
                    return "".join(ch.choices[0].delta.content or "" for ch in r if ch.choices)
                return r.choices[0].message.content

            with ThreadPoolExecutor(12) as pool:
                results = list(pool.map(one, range(36)))
            assert all(r and r.startswith("alpha") for r in results)
            rows = gw.telemetry()
            hosts = gw.hosts()
    served = [h.stats["requests"] for h in (slow, mid, fast)]
    assert sum(served) == len(rows)  # a line for every attempt, no more, no less
    failed = [r for r in rows if r["status"] != 200]
    assert len(failed) == fast.stats["errors"] > 0
    assert all(r["host"] == "fast" and r["status"] == 500 for r in failed)
    by_call = {}
    for r in rows:
        by_call.setdefault(r["call"], []).append(r)
    assert len(by_call) == 36
    assert all(sum(a["status"] == 200 for a in v) == 1 for v in by_call.values())
    assert any(a["retry"] > 0 for v in by_call.values() for a in v)
    # every failed call is counted; calls that were in flight together when the host failed
    # are one incident, one cooldown (not one escalation per call)
    assert hosts["fast"]["failures"] == fast.stats["errors"]
    assert 1 <= hosts["fast"]["cooldowns"] == hosts["fast"]["incidents"] <= fast.stats["errors"]
    assert not any(r["incomplete"] for r in rows)


def test_refused_host_and_rate_limit_with_retry_after(host):
    dead = closed_port_url()
    with TestHost(models=[MODEL], faults=Faults(rate_limit_rate=1.0, retry_after=5)) as limited:
        cfg = fleet_for(
            ("dead", dead), ("limited", limited), ("ok", host), routing={"strategy": "round_robin"}
        )
        with GatewayServer(cfg) as gw:
            c = client(gw, gw.issue_key("t"))
            for _ in range(3):
                r = c.chat.completions.create(
                    model="coder", max_tokens=2, messages=[{"role": "user", "content": "x"}]
                )
                assert r.choices[0].message.content
            rows = gw.telemetry()
            hosts = gw.hosts()
    statuses = {(r["host"], r["status"]) for r in rows}
    assert ("dead", "connect_error") in statuses and ("limited", 429) in statuses
    assert ("ok", 200) in statuses
    # the 429 host rests for its Retry-After (5 s), not the 0.3 s base cooldown
    assert limited.stats["rate_limited"] == 1
    assert 2.0 < hosts["limited"]["cooling_s"] <= 5.0


def test_all_hosts_limited_waits_out_retry_after():
    h = TestHost(models=[MODEL], faults=Faults(rate_limit_rate=1.0, retry_after=0.4))
    with h, GatewayServer(fleet_for(("only", h), routing={"max_attempts": 2})) as gw:
        c = client(gw, gw.issue_key("t"))
        threading.Timer(0.2, lambda: h.state.set_faults(rate_limit_rate=0.0)).start()
        t0 = time.monotonic()
        r = c.chat.completions.create(
            model="coder", max_tokens=2, messages=[{"role": "user", "content": "x"}]
        )
        waited = time.monotonic() - t0
    assert r.choices[0].message.content
    assert waited >= 0.38  # the gateway slept the host's Retry-After, then tried again


def test_mid_stream_drop_is_incomplete_and_told_to_the_client():
    h = TestHost(models=[MODEL], decode=400, faults=Faults(drop_rate=1.0, drop_after=2))
    with h, GatewayServer(fleet_for(("h", h))) as gw:
        c = client(gw, gw.issue_key("t"))
        got = []
        with pytest.raises(openai.APIError, match="broke the stream"):
            for ch in c.chat.completions.create(
                model="coder",
                max_tokens=40,
                stream=True,
                messages=[{"role": "user", "content": "x"}],
            ):
                got.append(ch)
        assert got  # bytes had reached the client before the break
        rows = gw.telemetry()
    assert len(rows) == 1 and rows[0]["incomplete"] is True
    assert rows[0]["status"] == "stream_broken"  # the host had accepted: not a connect error
    assert "stream broke after" in rows[0]["error"]
    # the tokens relayed before the break are counted (estimated: no usage chunk came)
    assert rows[0]["completion_tokens"] >= 2 and rows[0]["usage_estimated"] is True
    assert gw.trial_usage("t")["incomplete"] == 1


def test_non_streamed_call_survives_a_drop_on_another_host(host):
    with TestHost(
        models=[MODEL], prefill=1e6, decode=1e5, faults=Faults(drop_rate=1.0, drop_after=1)
    ) as dropper:
        cfg = fleet_for(("dropper", dropper), ("ok", host))
        with GatewayServer(cfg) as gw:
            c = client(gw, gw.issue_key("t"))
            r = c.chat.completions.create(
                model="coder", max_tokens=20, messages=[{"role": "user", "content": "x"}]
            )
            assert r.usage.completion_tokens == 20
            rows = gw.telemetry()
    assert [(x["host"], x["status"], x["retry"]) for x in rows] == [
        ("dropper", "stream_broken", 0),
        ("ok", 200, 1),
    ]


def test_record_then_replay_offline(host, tmp_path):
    cassette = tmp_path / "run.jsonl"
    msgs = [{"role": "user", "content": "hello there"}]
    with GatewayServer(fleet_for(("h", host)), record=cassette) as gw:
        c = client(gw, gw.issue_key("t"))
        first = c.chat.completions.create(model="coder", messages=msgs, max_tokens=6)
        streamed = "".join(
            ch.choices[0].delta.content or ""
            for ch in c.chat.completions.create(
                model="coder", messages=msgs, max_tokens=4, stream=True
            )
            if ch.choices
        )
    items = [json.loads(x) for x in cassette.read_text().splitlines()]
    assert len(items) == 2 and items[1]["request"]["stream"] is True
    assert items[0]["response"]["message"]["content"] == first.choices[0].message.content

    with GatewayServer(None, replay=cassette, require_keys=False) as gw:
        c = client(gw, "anything")
        again = c.chat.completions.create(model="coder", messages=msgs, max_tokens=6)
        assert again.choices[0].message.content == first.choices[0].message.content
        assert again.usage.prompt_tokens == first.usage.prompt_tokens
        with pytest.raises(openai.BadRequestError) as err:  # differs from its recording
            c.chat.completions.create(model="coder", messages=msgs, max_tokens=5, stream=True)
        assert "request.max_tokens: expected 4, got 5" in str(err.value)
        replay_text = "".join(
            ch.choices[0].delta.content or ""
            for ch in c.chat.completions.create(
                model="coder", messages=msgs, max_tokens=4, stream=True
            )
            if ch.choices
        )
        assert replay_text == streamed
        with pytest.raises(openai.BadRequestError, match="no recording"):
            c.chat.completions.create(model="coder", messages=msgs, max_tokens=4)
        rows = gw.telemetry()
    assert [r["status"] for r in rows] == [200, 400, 200, 400]
    assert rows[0]["host"] == "replay"


def test_hand_written_cassette_with_tool_calls(tmp_path):
    cassette = tmp_path / "agent.json"
    cassette.write_text(
        json.dumps(
            [
                {
                    "request": {
                        "model": "coder",
                        "last_message": {"content": {"$contains": "files"}},
                    },
                    "response": {
                        "content": "Looking.",
                        "tool_calls": [{"name": "bash", "arguments": {"command": "ls"}}],
                    },
                },
                {
                    "request": {"last_message": {"role": "tool"}},
                    "response": {"content": "Done: a.py b.py"},
                },
            ]
        )
    )
    tools = [
        {
            "type": "function",
            "function": {
                "name": "bash",
                "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
            },
        }
    ]
    with GatewayServer(None, replay=cassette, require_keys=False) as gw:
        c = client(gw, "k")
        msgs = [{"role": "user", "content": "list the files"}]
        stream = c.chat.completions.create(model="coder", messages=msgs, tools=tools, stream=True)
        calls = {}
        for ch in stream:
            for tc in (ch.choices[0].delta.tool_calls or []) if ch.choices else []:
                slot = calls.setdefault(tc.index, {"id": tc.id, "name": "", "args": ""})
                slot["name"] += tc.function.name or ""
                slot["args"] += tc.function.arguments or ""
        assert calls[0]["name"] == "bash" and json.loads(calls[0]["args"]) == {"command": "ls"}
        msgs += [
            {
                "role": "assistant",
                "content": "Looking.",
                "tool_calls": [
                    {
                        "id": calls[0]["id"],
                        "type": "function",
                        "function": {"name": "bash", "arguments": calls[0]["args"]},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": calls[0]["id"], "content": "a.py b.py"},
        ]
        r = c.chat.completions.create(model="coder", messages=msgs, tools=tools)
        assert r.choices[0].message.content == "Done: a.py b.py"
        assert r.choices[0].finish_reason == "stop"


def test_gateway_cli_serves(host, tmp_path):
    """``python -m harness.cli gateway serve`` in a subprocess."""
    import subprocess
    import sys

    fleet = tmp_path / "fleet.yml"
    fleet.write_text(
        json.dumps(
            {
                "hosts": [{"name": "h", "base_url": host.url}],
                "models": {"coder": {"upstream": MODEL}},
            }
        )
    )
    keys = tmp_path / "keys.yml"
    keys.write_text("k1: {trial: t1, agent: a, model: coder}\n")
    sock = bind_socket("127.0.0.1", 0)
    port = sock.getsockname()[1]
    sock.close()
    tele = tmp_path / "gateway-telemetry.jsonl"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "harness.cli",
            "gateway",
            "serve",
            "--port",
            str(port),
            "--fleet",
            str(fleet),
            "--keys",
            str(keys),
        ],
        cwd=tmp_path,  # telemetry is on disk by default: ./gateway-telemetry.jsonl
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 90  # a loaded machine starts Python slowly
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{port}/health", timeout=1)
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline and proc.poll() is None
                time.sleep(0.1)
        # keys are set: /health is a bare liveness answer without one, details with one
        assert httpx.get(f"http://127.0.0.1:{port}/health").json() == {"ok": True}
        auth = {"Authorization": "Bearer k1"}
        assert "h" in httpx.get(f"http://127.0.0.1:{port}/health", headers=auth).json()["hosts"]
        c = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="k1", max_retries=0)
        r = c.chat.completions.create(
            model="coder", max_tokens=3, messages=[{"role": "user", "content": "x"}]
        )
        assert r.usage.completion_tokens == 3
        with pytest.raises(openai.AuthenticationError):
            openai.OpenAI(
                base_url=f"http://127.0.0.1:{port}/v1", api_key="bad", max_retries=0
            ).models.list()
    finally:
        proc.terminate()
        proc.wait(10)
    rows = [json.loads(x) for x in tele.read_text().splitlines()]
    assert [(r["trial"], r["status"]) for r in rows] == [("t1", 200)]


def test_client_hanging_up_mid_stream_is_recorded_and_frees_the_host():
    with TestHost(models=[MODEL], decode=100) as h, GatewayServer(fleet_for(("h", h))) as gw:
        key = gw.issue_key("t")
        body = {
            "model": "coder",
            "max_tokens": 200,
            "stream": True,
            "messages": [{"role": "user", "content": "x"}],
        }
        with httpx.stream(
            "POST",
            gw.base_url + "/chat/completions",
            json=body,
            headers={"Authorization": f"Bearer {key}"},
        ) as r:
            lines = r.iter_lines()
            assert next(lines).startswith("data: ")
        deadline = time.monotonic() + 5
        while not gw.telemetry() and time.monotonic() < deadline:
            time.sleep(0.05)
        rows = gw.telemetry()
        assert gw.hosts()["h"]["inflight"] == 0
    assert len(rows) == 1 and rows[0]["incomplete"] is True
    assert "client disconnected" in rows[0]["error"]


def test_recorded_tool_calls_replay_streamed_and_not(host, tmp_path):
    cassette = tmp_path / "tools.jsonl"
    tools = [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}]
    msgs = [{"role": "user", "content": "run something"}]
    ask = {
        "model": "coder",
        "messages": msgs,
        "tools": tools,
        "tool_choice": "required",
        "max_tokens": 6,
    }
    with GatewayServer(fleet_for(("h", host)), record=cassette) as gw:
        c = client(gw, gw.issue_key("t"))
        live = c.chat.completions.create(**ask).choices[0]
        args = ""
        for ch in c.chat.completions.create(**ask, stream=True):
            for tc in (ch.choices[0].delta.tool_calls or []) if ch.choices else []:
                args += tc.function.arguments or ""
    assert live.finish_reason == "tool_calls"
    call = live.message.tool_calls[0]
    assert call.function.name == "bash" and json.loads(call.function.arguments)["command"]
    assert args == call.function.arguments  # streamed deltas folded into the same call
    recorded = [json.loads(x) for x in cassette.read_text().splitlines()]
    assert recorded[1]["response"]["message"]["tool_calls"][0]["function"]["arguments"] == args

    with GatewayServer(None, replay=cassette, require_keys=False) as gw:
        c = client(gw, "k")
        again = c.chat.completions.create(**ask).choices[0]
        assert again.message.tool_calls[0].function.arguments == call.function.arguments
        streamed = "".join(
            tc.function.arguments or ""
            for ch in c.chat.completions.create(**ask, stream=True)
            if ch.choices
            for tc in ch.choices[0].delta.tool_calls or []
        )
        assert streamed == args
