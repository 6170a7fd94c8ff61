"""The gateway in front of a real engine: llama.cpp's server (the kind LM Studio runs) in
the ``engine`` image, on the built-in model. What the gateway records (usage, budget,
telemetry) is what the engine reports, call by call; the engine's own ``timings`` are kept
in the telemetry line; streams and non-streamed calls pass through as the engine sends them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import pytest

from harness.fleet.config import FleetConfig, parse_fleet
from harness.fleet.engine_host import EngineHost
from harness.gateway import GatewayServer
from tests.support.engine import ALIAS, engine

pytestmark = [pytest.mark.integration, pytest.mark.docker, pytest.mark.engine]
PROMPT = [{"role": "user", "content": "Name three colours."}]


@pytest.fixture(scope="module")
def host() -> Iterator[EngineHost]:
    with engine() as running:
        yield running


def _fleet(host: EngineHost) -> FleetConfig:
    return parse_fleet(
        {
            "hosts": [host.host_entry()],
            "models": {"coder": {"upstream": ALIAS}},
            "routing": {"cooldown": {"base_s": 0.3, "max_s": 2}, "max_wait_s": 10},
        }
    )


def _direct(url: str, **body: object) -> dict:
    reply = httpx.post(
        url + "/v1/chat/completions",
        json={"model": ALIAS, "messages": PROMPT, "temperature": 0, "seed": 1, **body},
        timeout=60,
    )
    reply.raise_for_status()
    return reply.json()


def test_usage_the_gateway_records_is_what_the_engine_reports(
    host: EngineHost, tmp_path: Path
) -> None:
    tele = tmp_path / "telemetry.jsonl"
    direct = _direct(host.url, max_tokens=6)
    with GatewayServer(_fleet(host), telemetry=tele) as gw:
        c = openai.OpenAI(base_url=gw.base_url, api_key=gw.issue_key("t1"), max_retries=0)
        via = c.chat.completions.with_raw_response.create(
            model="coder", messages=PROMPT, max_tokens=6, temperature=0, seed=1
        )
        usage = gw.trial_usage("t1")
    body = json.loads(via.text)
    assert body["model"] == "coder"  # re-labelled; the rest is the engine's
    assert body["usage"]["prompt_tokens"] == direct["usage"]["prompt_tokens"] > 5
    assert body["usage"]["completion_tokens"] == direct["usage"]["completion_tokens"] == 6
    assert body["choices"][0]["message"]["content"] == direct["choices"][0]["message"]["content"]
    row = json.loads(tele.read_text().splitlines()[0])
    assert row["status"] == 200 and row["host"] == host.name and row["stream"] is False
    # every token the engine counted for the call, none estimated
    assert row["prompt_tokens"] == body["usage"]["prompt_tokens"]
    assert row["completion_tokens"] == body["usage"]["completion_tokens"]
    assert "usage_estimated" not in row
    # the engine's own clock rides along: prefill and decode times, the prompt cache reused
    timings = body["timings"]
    assert row["engine_timings"]["prompt_ms"] == pytest.approx(timings["prompt_ms"])
    assert row["engine_timings"]["predicted_ms"] == pytest.approx(timings["predicted_ms"])
    assert row["engine_timings"]["cache_n"] == timings["cache_n"]
    assert row["ttft_from"] == "host" and row["ttft_s"] == pytest.approx(
        timings["prompt_ms"] / 1000, abs=1e-3
    )
    assert usage["calls"] == 1
    assert usage["prompt_tokens"] == body["usage"]["prompt_tokens"]


def test_a_stream_through_the_gateway_is_the_engines_stream(
    host: EngineHost, tmp_path: Path
) -> None:
    tele = tmp_path / "telemetry.jsonl"
    direct = _direct(host.url, max_tokens=8)
    with GatewayServer(_fleet(host), telemetry=tele) as gw:
        c = openai.OpenAI(base_url=gw.base_url, api_key=gw.issue_key("t2"), max_retries=0)
        chunks = list(
            c.chat.completions.create(
                model="coder",
                messages=PROMPT,
                max_tokens=8,
                temperature=0,
                seed=1,
                stream=True,
                stream_options={"include_usage": True},
            )
        )
        usage = gw.trial_usage("t2")
    text = "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices)
    assert text == direct["choices"][0]["message"]["content"]  # greedy: the same tokens
    assert len([ch for ch in chunks if ch.choices and ch.choices[0].delta.content]) >= 2
    last = [ch for ch in chunks if ch.usage is not None]
    assert len(last) == 1 and last[0].usage is not None
    row = json.loads(tele.read_text().splitlines()[0])
    assert row["stream"] is True and row["status"] == 200
    assert row["ttft_from"] == "gateway" and 0 < row["ttft_s"] <= row["total_s"]
    # llama.cpp's server sends its usage chunk when asked: the gateway records exactly it
    assert "usage_estimated" not in row
    assert row["prompt_tokens"] == last[0].usage.prompt_tokens == direct["usage"]["prompt_tokens"]
    assert row["completion_tokens"] == last[0].usage.completion_tokens == 8
    assert row["engine_timings"]["predicted_per_second"] > 0
    assert usage["completion_tokens"] == row["completion_tokens"]
