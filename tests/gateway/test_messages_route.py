"""The Anthropic Messages front against a real test host, driven by the official
``anthropic`` client: text and tool use, streamed and not, system prompts, count_tokens,
``x-api-key`` keys, agent aliases, budgets, and telemetry equal to the host's usage."""

import json

import anthropic
import pytest

from harness.config.budget import Budget
from harness.fleet.config import parse_fleet
from harness.gateway import GatewayServer
from harness.testing.lmstudio import TestHost

pytestmark = pytest.mark.integration

MODEL = "org/coder"
BASH = {
    "name": "bash",
    "description": "run a command",
    "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}},
}


def fleet_for(host, **extra):
    return parse_fleet(
        {
            "hosts": [{"name": "h", "base_url": host.url}],
            "models": {"coder": {"upstream": MODEL}},
            "agent_aliases": {"claude-code": {"claude-test-alias": "coder"}},
            **extra,
        }
    )


@pytest.fixture
def host():
    with TestHost(models=[MODEL], prefill=20000, decode=2000) as h:
        yield h


def client(gw, key):
    return anthropic.Anthropic(base_url=gw.url, api_key=key, max_retries=0, timeout=30)


def test_text_tools_streaming_and_usage(host, tmp_path):
    tele = tmp_path / "t.jsonl"
    with GatewayServer(fleet_for(host), telemetry=tele) as gw:
        key = gw.issue_key("trial-a", "claude-code", "coder")
        c = client(gw, key)  # sends x-api-key
        msg = c.messages.create(
            model="claude-test-alias",  # the agent's hard-coded name, through agent_aliases
            max_tokens=8,
            system="You are terse.",
            messages=[{"role": "user", "content": "say something " * 50}],
        )
        assert msg.type == "message" and msg.model == "claude-test-alias"
        assert msg.content[0].type == "text" and msg.content[0].text.startswith("alpha")
        assert msg.stop_reason == "max_tokens" and msg.usage.output_tokens == 8

        # tool use, streamed: the host answers with a tool call (tool_choice any)
        with c.messages.stream(
            model="claude-test-alias",
            max_tokens=6,
            tools=[BASH],
            tool_choice={"type": "any"},
            messages=[{"role": "user", "content": "list files"}],
        ) as stream:
            kinds = [ev.type for ev in stream]
            final = stream.get_final_message()
        assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
        assert {"content_block_start", "content_block_stop", "message_delta"} <= set(kinds)
        tool = final.content[-1]
        assert final.stop_reason == "tool_use" and tool.type == "tool_use"
        assert tool.name == "bash" and tool.input["command"].startswith("echo alpha")
        assert final.usage.output_tokens == 6

        # the tool result goes back; Bearer auth works too
        bearer = anthropic.Anthropic(
            base_url=gw.url, auth_token=key, api_key=None, max_retries=0, timeout=30
        )
        reply = bearer.messages.create(
            model="claude-test-alias",
            max_tokens=4,
            tools=[BASH],
            messages=[
                {"role": "user", "content": "list files"},
                {"role": "assistant", "content": [tool.model_dump(exclude_none=True)]},
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": tool.id, "content": "a.py"},
                        {"type": "text", "text": "and now?"},
                    ],
                },
            ],
        )
        assert reply.content[0].type == "text"
        text_stream = c.messages.create(
            model="claude-test-alias",
            max_tokens=5,
            stream=True,
            messages=[{"role": "user", "content": "hello"}],
        )
        deltas = [ev.delta.text for ev in text_stream if ev.type == "content_block_delta"]
        assert "".join(deltas).split() == ["alpha", "beta", "gamma", "delta", "epsilon"][:5]

        counted = c.messages.count_tokens(
            model="claude-test-alias", messages=[{"role": "user", "content": "word " * 400}]
        )
        assert counted.input_tokens > 100

        with pytest.raises(anthropic.AuthenticationError):
            client(gw, "wrong").messages.create(
                model="x", max_tokens=1, messages=[{"role": "user", "content": "hi"}]
            )

    rows = [json.loads(x) for x in tele.read_text().splitlines()]
    assert len(rows) == 4 and all(r["status"] == 200 and r["trial"] == "trial-a" for r in rows)
    assert [r["completion_tokens"] for r in rows] == [8, 6, 4, 5]
    assert rows[0]["prompt_tokens"] == msg.usage.input_tokens + (
        msg.usage.cache_read_input_tokens or 0
    )
    assert host.stats["prefill_tokens"] + host.stats["cached_tokens"] == sum(
        r["prompt_tokens"] for r in rows
    )
    assert host.stats["completion_tokens"] == 8 + 6 + 4 + 5


def test_budget_refusal_is_a_messages_error(host):
    with GatewayServer(fleet_for(host), budget=Budget(calls=1)) as gw:
        c = client(gw, gw.issue_key("trial-b", "claude-code", "coder"))
        c.messages.create(model="m", max_tokens=2, messages=[{"role": "user", "content": "a"}])
        with pytest.raises(anthropic.RateLimitError) as err:
            c.messages.create(model="m", max_tokens=2, messages=[{"role": "user", "content": "a"}])
        body = err.value.body
        assert body["type"] == "error" and body["error"]["type"] == "budget_exceeded"
        assert err.value.response.headers.get("x-should-retry") == "false"


def test_replayed_chat_cassette_serves_a_messages_client(tmp_path):
    cassette = tmp_path / "c.jsonl"
    cassette.write_text(
        json.dumps(
            {
                "request": {"last_message": {"role": "user", "content": {"$contains": "fix"}}},
                "response": {
                    "content": "Looking.",
                    "tool_calls": [{"name": "bash", "arguments": {"command": "ls"}}],
                    "usage": {"prompt_tokens": 100, "completion_tokens": 7, "total_tokens": 107},
                },
            }
        )
        + "\n"
    )
    with GatewayServer(replay=cassette) as gw:
        c = client(gw, gw.issue_key("trial-c", "claude-code", "replay"))
        with c.messages.stream(
            model="claude-haiku", max_tokens=100, tools=[BASH],
            messages=[{"role": "user", "content": "fix it"}],
        ) as stream:  # fmt: skip
            final = stream.get_final_message()
        assert [b.type for b in final.content] == ["text", "tool_use"]
        assert final.content[1].input == {"command": "ls"}
        assert final.usage.input_tokens == 100 and final.usage.output_tokens == 7
        assert gw.trial_usage("trial-c")["completion_tokens"] == 7


def test_a_messages_host_is_passed_through(host, tmp_path, monkeypatch):
    """Host ``messages: true``: the call reaches it as Messages (here another gateway, whose
    own front translates), and usage is read from its Messages replies and stream."""
    tele = tmp_path / "a.jsonl"
    with GatewayServer(fleet_for(host), telemetry=tmp_path / "b.jsonl") as inner:
        monkeypatch.setenv("INNER_KEY", inner.issue_key("inner", None, "coder"))
        fleet = parse_fleet(
            {
                "hosts": [
                    {
                        "name": "anthropic-like",
                        "base_url": inner.url,
                        "messages": True,
                        "api_key_env": "INNER_KEY",
                    }
                ],
                "models": {"coder": {"upstream": "coder"}},
            }
        )
        with GatewayServer(fleet, telemetry=tele) as gw:
            c = client(gw, gw.issue_key("trial-p", "claude-code", "coder"))
            msg = c.messages.create(
                model="coder", max_tokens=5, messages=[{"role": "user", "content": "hi " * 30}]
            )
            with c.messages.stream(
                model="coder", max_tokens=4, messages=[{"role": "user", "content": "yo"}]
            ) as stream:
                final = stream.get_final_message()
    assert msg.usage.output_tokens == 5 and final.usage.output_tokens == 4
    rows = [json.loads(x) for x in tele.read_text().splitlines()]
    inner_rows = [json.loads(x) for x in (tmp_path / "b.jsonl").read_text().splitlines()]
    assert [r["endpoint"] for r in rows] == ["/v1/messages"] * 2
    assert [r["completion_tokens"] for r in rows] == [5, 4]
    assert [r["prompt_tokens"] for r in rows] == [r["prompt_tokens"] for r in inner_rows]
