"""A non-streamed client call goes non-streamed to its host: one JSON reply passed on
(model re-labelled), usage and budget from its body, the time to first token only as the
host reports it (llama.cpp's ``timings``, LM Studio's ``stats``), else none."""

import json

import httpx
import openai
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from harness.fleet.config import parse_fleet
from harness.gateway import GatewayServer
from harness.gateway.host_times import reported_ttft_s
from harness.testing.lmstudio import Faults, TestHost
from harness.util.serving import ThreadedServer

MODEL = "org/coder"


@pytest.mark.unit
def test_host_reported_ttft_is_read_from_llama_cpp_and_lm_studio_bodies():
    assert reported_ttft_s({"timings": {"prompt_ms": 250.0, "predicted_ms": 900}}) == 0.25
    assert reported_ttft_s({"stats": {"time_to_first_token": 0.4}}) == 0.4
    assert reported_ttft_s({"usage": {"prompt_tokens": 3}}) is None
    for odd in ({"timings": {"prompt_ms": "12"}}, {"timings": {"prompt_ms": -1}}, {"stats": 3}):
        assert reported_ttft_s(odd) is None
    assert reported_ttft_s({"timings": {"prompt_ms": True}}) is None


class PlainHost(ThreadedServer):
    """An OpenAI-compatible host that reports no timings; remembers what it was asked."""

    __test__ = False

    def __init__(self) -> None:
        self.asked: list[dict] = []

        async def chat(request: Request) -> JSONResponse:
            body = await request.json()
            self.asked.append(body)
            return JSONResponse(
                {
                    "id": "plain-1",
                    "object": "chat.completion",
                    "created": 1,
                    "model": body["model"],
                    "choices": [
                        {
                            "index": 0,
                            "finish_reason": "stop",
                            "message": {"role": "assistant", "content": "plain reply"},
                        }
                    ],
                    "usage": {"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9},
                    "system_fingerprint": "fp-plain",
                }
            )

        super().__init__(Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])]))


def fleet_for(*hosts):
    return parse_fleet(
        {
            "hosts": [{"name": n, "base_url": h.url, "watts": 100} for n, h in hosts],
            "models": {"coder": {"upstream": MODEL}},
            "routing": {"cooldown": {"base_s": 0.3, "max_s": 2}, "max_wait_s": 3},
        }
    )


def client(gw, key):
    return openai.OpenAI(base_url=gw.base_url, api_key=key, max_retries=0, timeout=30)


@pytest.mark.integration
def test_non_streamed_call_is_one_json_reply_with_the_hosts_own_fields(tmp_path):
    tele = tmp_path / "telemetry.jsonl"
    with PlainHost() as host, GatewayServer(fleet_for(("p", host)), telemetry=tele) as gw:
        r = client(gw, gw.issue_key("t1", "mini", "coder")).chat.completions.create(
            model="coder", max_tokens=2, messages=[{"role": "user", "content": "hi"}]
        )
        usage = gw.trial_usage("t1")
    assert not host.asked[0].get("stream")
    assert "stream_options" not in host.asked[0]  # not turned into a stream upstream
    assert host.asked[0]["model"] == MODEL
    assert r.model == "coder" and r.choices[0].message.content == "plain reply"
    assert r.system_fingerprint == "fp-plain" and r.id == "plain-1"  # the host's body, as is
    row = json.loads(tele.read_text().splitlines()[0])
    assert row["status"] == 200 and row["stream"] is False
    assert (row["prompt_tokens"], row["completion_tokens"]) == (7, 2)
    assert row["total_s"] > 0
    # nothing measures a first token here: no ttft, no rates, said by ttft_from
    assert row["ttft_s"] is None and row["ttft_from"] is None
    assert row["prefill_tps"] is None and row["decode_tps"] is None
    assert usage["calls"] == 1 and usage["completion_tokens"] == 2


@pytest.mark.integration
def test_non_streamed_ttft_is_the_hosts_report_and_a_stream_is_measured(tmp_path):
    tele = tmp_path / "telemetry.jsonl"
    with (
        TestHost(models=[MODEL], prefill=4000, decode=2000) as host,
        GatewayServer(fleet_for(("h", host)), telemetry=tele) as gw,
    ):
        msgs = [{"role": "user", "content": "word " * 400}]
        raw = httpx.post(
            gw.base_url + "/chat/completions",
            json={"model": "coder", "messages": msgs, "max_tokens": 5},
            headers={"Authorization": f"Bearer {gw.issue_key('t1')}"},
        ).json()
        c = client(gw, gw.issue_key("t2"))
        list(c.chat.completions.create(model="coder", messages=msgs, max_tokens=5, stream=True))
    rows = [json.loads(x) for x in tele.read_text().splitlines()]
    assert raw["model"] == "coder" and raw["usage"]["completion_tokens"] == 5
    # the stub reports llama.cpp's timings: the gateway's ttft is exactly the host's figure
    assert rows[0]["ttft_from"] == "host" and raw["timings"]["prompt_ms"] > 0
    assert rows[0]["ttft_s"] == round(raw["timings"]["prompt_ms"] / 1000, 4)
    assert rows[0]["ttft_s"] <= rows[0]["total_s"] and rows[0]["prefill_tps"] > 0
    assert rows[1]["stream"] is True and rows[1]["ttft_from"] == "gateway"
    assert 0 < rows[1]["ttft_s"] <= rows[1]["total_s"]


@pytest.mark.integration
def test_a_non_streamed_reply_cut_short_is_retried_and_never_charged():
    with (
        TestHost(models=[MODEL], faults=Faults(drop_rate=1.0)) as cutter,
        TestHost(models=[MODEL]) as ok,
        GatewayServer(fleet_for(("cutter", cutter), ("ok", ok))) as gw,
    ):
        r = client(gw, gw.issue_key("t")).chat.completions.create(
            model="coder", max_tokens=3, messages=[{"role": "user", "content": "x"}]
        )
        rows = gw.telemetry()
        usage = gw.trial_usage("t")
    assert r.usage.completion_tokens == 3 and cutter.stats["dropped"] == 1
    assert [(x["host"], x["status"]) for x in rows] == [("cutter", "stream_broken"), ("ok", 200)]
    assert rows[0]["completion_tokens"] == 0  # the cut reply is not charged
    assert usage["completion_tokens"] == 3


@pytest.mark.integration
def test_a_stream_whose_host_sends_no_usage_is_counted_not_free(tmp_path):
    """A host may ignore ``stream_options.include_usage`` (llama-cpp-python's server
    does): the tokens it streamed are counted, estimated, instead of charged as none."""
    tele = tmp_path / "telemetry.jsonl"
    with (
        TestHost(models=[MODEL], stream_usage=False) as host,
        GatewayServer(fleet_for(("h", host)), telemetry=tele) as gw,
    ):
        stream = client(gw, gw.issue_key("t")).chat.completions.create(
            model="coder",
            max_tokens=6,
            stream=True,
            stream_options={"include_usage": True},
            messages=[{"role": "user", "content": "count " * 50}],
        )
        chunks = list(stream)
        usage = gw.trial_usage("t")
    assert not any(ch.usage for ch in chunks)  # none came from the host
    row = json.loads(tele.read_text().splitlines()[0])
    assert row["status"] == 200 and row["usage_estimated"] is True
    assert row["completion_tokens"] == 6 and row["prompt_tokens"] > 0
    assert usage["completion_tokens"] == 6 and usage["calls"] == 1
