"""Per-trial budgets enforced at the gateway, driven by the official openai client: every
kind (tokens, cost-usd, calls), the refusal's shape, the telemetry row, the budget
endpoint, and usage up to the cut equal to what telemetry records."""

import httpx
import openai
import pytest

from harness.config.budget import Budget
from harness.fleet.config import parse_fleet
from harness.fleet.telemetry import read_jsonl, summarize
from harness.gateway import GatewayServer
from harness.testing.lmstudio import TestHost

pytestmark = pytest.mark.integration

MODEL = "org/coder"
MSGS = [{"role": "user", "content": "word " * 200}]


@pytest.fixture(scope="module")
def host():
    with TestHost(models=[MODEL], prefill=1e6, decode=1e5) as h:
        yield h


def gateway(host, tmp_path, budget, **kw):
    fleet = parse_fleet(
        {"hosts": [{"name": "h", "base_url": host.url}], "models": {"coder": {"upstream": MODEL}}}
    )
    return GatewayServer(
        fleet,
        telemetry=tmp_path / "t.jsonl",
        prices={"coder": {"input": 10.0, "output": 20.0}},
        budget=budget,
        **kw,
    )


def spend_until_refused(c, limit=20, stream=False):
    """Calls until the gateway refuses one; returns (calls that went through, the refusal)."""
    for n in range(limit):
        try:
            if stream:
                list(
                    c.chat.completions.create(
                        model="coder", messages=MSGS, max_tokens=8, stream=True
                    )
                )
            else:
                c.chat.completions.create(model="coder", messages=MSGS, max_tokens=8)
        except openai.RateLimitError as exc:
            return n, exc
    raise AssertionError("never refused")


def budget_endpoint(gw, key):
    r = httpx.get(gw.base_url + "/harness/budget", headers={"Authorization": f"Bearer {key}"})
    r.raise_for_status()
    return r.json()


@pytest.mark.parametrize(
    ("budget", "kind"),
    [
        (Budget(calls=3), "calls"),
        (Budget(tokens=700), "tokens"),
        (Budget.model_validate({"cost-usd": 0.005}), "cost-usd"),
    ],
)
def test_every_budget_kind_refuses_past_the_limit(host, tmp_path, budget, kind):
    with gateway(host, tmp_path, budget) as gw:
        key = gw.issue_key("trial-b", "mini", "coder")
        c = openai.OpenAI(base_url=gw.base_url, api_key=key, max_retries=2, timeout=10)
        assert budget_endpoint(gw, key)["exhausted"] is None
        n, exc = spend_until_refused(c, stream=kind == "tokens")
        assert n >= 1
        assert exc.status_code == 429
        err = exc.body if isinstance(exc.body, dict) else {}
        assert err.get("type") == "budget_exceeded" and err.get("code") == "budget_exceeded"
        # the openai client did not retry the refusal (x-should-retry: false)
        rows = read_jsonl(tmp_path / "t.jsonl")
        refused = [r for r in rows if r["status"] == "budget"]
        assert len(refused) == 1 and refused[0]["trial"] == "trial-b"
        # a second try is refused as well, and written again
        with pytest.raises(openai.RateLimitError):
            c.chat.completions.create(model="coder", messages=MSGS, max_tokens=8)
        state = budget_endpoint(gw, key)
        assert state["exhausted"] == kind
        assert state["limit"] == {
            "tokens": budget.tokens,
            "cost_usd": budget.cost_usd,
            "calls": budget.calls,
        }
        rows = read_jsonl(tmp_path / "t.jsonl")
        spent = summarize(rows, "trial-b")
        # usage up to the cut is exact: the endpoint and telemetry agree
        assert state["used"]["calls"] == spent["calls"] == n
        assert state["used"]["tokens"] == spent["prompt_tokens"] + spent["completion_tokens"]
        assert state["used"]["cost_usd"] == pytest.approx(spent["cost_usd"])
        assert spent["budget_refusals"] == 2
        assert all(r["status"] == 200 for r in rows if r["status"] != "budget")
        if kind == "calls":
            assert n == 3


def test_budget_is_per_trial_and_the_endpoint_needs_a_key(host, tmp_path):
    with gateway(host, tmp_path, Budget(calls=1)) as gw:
        a, b = gw.issue_key("a"), gw.issue_key("b")
        ca = openai.OpenAI(base_url=gw.base_url, api_key=a, max_retries=0)
        cb = openai.OpenAI(base_url=gw.base_url, api_key=b, max_retries=0)
        ca.chat.completions.create(model="coder", messages=MSGS, max_tokens=2)
        with pytest.raises(openai.RateLimitError):
            ca.chat.completions.create(model="coder", messages=MSGS, max_tokens=2)
        cb.chat.completions.create(model="coder", messages=MSGS, max_tokens=2)  # b unspent
        assert httpx.get(gw.base_url + "/harness/budget").status_code == 401
        assert gw.budget_state("a")["exhausted"] == "calls"


def test_no_budget_means_unlimited(host, tmp_path):
    with gateway(host, tmp_path, None) as gw:
        key = gw.issue_key("t")
        c = openai.OpenAI(base_url=gw.base_url, api_key=key, max_retries=0)
        for _ in range(3):
            c.chat.completions.create(model="coder", messages=MSGS, max_tokens=2)
        state = budget_endpoint(gw, key)
        assert state["exhausted"] is None and state["used"]["calls"] == 3
        assert state["limit"] == {"tokens": None, "cost_usd": None, "calls": None}


def test_a_per_call_token_limit_lowers_what_each_call_may_generate(host, tmp_path):
    """``--budget-call-tokens``: the host is asked for at most that many tokens per call,
    whatever the call named (a higher limit, none at all, Responses' own field); a lower
    limit of the call's own stands, and the limit refuses no call."""
    with gateway(host, tmp_path, Budget(call_tokens=5)) as gw:
        c = openai.OpenAI(base_url=gw.base_url, api_key=gw.issue_key("t"), max_retries=0)
        unnamed = c.chat.completions.create(model="coder", messages=MSGS)
        higher = c.chat.completions.create(model="coder", messages=MSGS, max_tokens=40)
        newer = c.chat.completions.create(model="coder", messages=MSGS, max_completion_tokens=40)
        lower = c.chat.completions.create(model="coder", messages=MSGS, max_tokens=3)
        streamed = c.chat.completions.create(
            model="coder", messages=MSGS, stream=True, stream_options={"include_usage": True}
        )
        usage = [ch.usage for ch in streamed if ch.usage][-1]
        responses = c.responses.create(model="coder", input="word " * 50)
        assert unnamed.usage and higher.usage and newer.usage and lower.usage
        assert unnamed.usage.completion_tokens == 5
        assert higher.usage.completion_tokens == 5
        assert newer.usage.completion_tokens == 5
        assert lower.usage.completion_tokens == 3
        assert usage.completion_tokens == 5
        assert responses.usage and responses.usage.output_tokens == 5
        rows = read_jsonl(tmp_path / "t.jsonl")
        assert [r["status"] for r in rows] == [200] * 6


@pytest.mark.unit
def test_a_limit_in_another_shape_or_field_does_not_slip_past_the_cap():
    from harness.gateway.calls import CHAT, RESPONSES, cap_output

    capped = cap_output(
        {"max_tokens": "900", "max_completion_tokens": 1e6, "n_predict": -1}, 8, CHAT
    )
    assert capped == {"max_tokens": 8, "max_completion_tokens": 8, "n_predict": 8}
    assert cap_output({"max_tokens": True}, 8, CHAT) == {"max_tokens": 8}
    assert cap_output({"max_tokens": 3}, 8, CHAT) == {"max_tokens": 3}
    assert cap_output({"max_output_tokens": 0}, 8, RESPONSES) == {"max_output_tokens": 8}


def test_the_per_call_limit_is_a_budget_of_its_own():
    assert not Budget(call_tokens=64).unlimited
    assert Budget.model_validate({"call-tokens": 64}).call_tokens == 64
    assert Budget(calls=2).merged(Budget(call_tokens=8)) == Budget(calls=2, call_tokens=8)


def test_a_call_the_budget_let_through_is_answered_before_the_agent_is_stopped(tmp_path):
    """The last call a budget admits is answered in full: the budget reads as exhausted
    (the trial's signal to stop the agent) only once that answer has ended, even when a
    call past the limit was refused meanwhile (qwen-code sends calls side by side)."""
    with TestHost(models=[MODEL], prefill=1e6, decode=40) as slow:
        with gateway(slow, tmp_path, Budget(calls=1)) as gw:
            key = gw.issue_key("t")
            c = openai.OpenAI(base_url=gw.base_url, api_key=key, max_retries=0)
            stream = c.chat.completions.create(
                model="coder", messages=MSGS, max_tokens=60, stream=True
            )
            first = next(iter(stream))  # the answer has begun; ~1.5 s of it is still to come
            assert first is not None
            state = budget_endpoint(gw, key)
            assert state["used"]["calls"] == 1 and state["exhausted"] is None
            assert len(list(stream)) > 1
            assert budget_endpoint(gw, key)["exhausted"] == "calls"
        with gateway(slow, tmp_path / "b", Budget(calls=1)) as gw:
            key = gw.issue_key("t")
            c = openai.OpenAI(base_url=gw.base_url, api_key=key, max_retries=0)
            stream = c.chat.completions.create(
                model="coder", messages=MSGS, max_tokens=60, stream=True
            )
            next(iter(stream))
            with pytest.raises(openai.RateLimitError):  # a second call, past the limit
                c.chat.completions.create(model="coder", messages=MSGS, max_tokens=2)
            assert budget_endpoint(gw, key)["exhausted"] is None  # the first still runs
            assert len(list(stream)) > 1
            assert budget_endpoint(gw, key)["exhausted"] == "calls"
