"""The gateway in front of a real engine: llama.cpp's OpenAI-compatible server (the
kind LM Studio runs) on a tiny random-weight model the test writes itself. What the
gateway records (usage, budget, telemetry) is what the engine reports; streams and
non-streamed calls pass through as the engine sends them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import pytest

from harness.fleet.config import parse_fleet
from harness.gateway import GatewayServer
from tests.support.llamacpp import ALIAS, engine_available, llama_server, write_tiny_model

pytestmark = [
    pytest.mark.integration,
    pytest.mark.engine,
    pytest.mark.skipif(not engine_available(), reason="needs the engine extra (llama.cpp)"),
]
PROMPT = [{"role": "user", "content": "the quick brown fox and the lazy dog"}]


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    model = write_tiny_model(tmp_path_factory.mktemp("engine") / "tiny.gguf")
    with llama_server(model) as url:
        yield url


def _fleet(url: str) -> object:
    return parse_fleet(
        {
            "hosts": [{"name": "llama", "base_url": url, "watts": 50}],
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


def test_usage_the_gateway_records_is_what_the_engine_reports(engine: str, tmp_path: Path) -> None:
    tele = tmp_path / "telemetry.jsonl"
    direct = _direct(engine, max_tokens=6)
    with GatewayServer(_fleet(engine), telemetry=tele) as gw:
        c = openai.OpenAI(base_url=gw.base_url, api_key=gw.issue_key("t1"), max_retries=0)
        via = c.chat.completions.create(
            model="coder", messages=PROMPT, max_tokens=6, temperature=0, seed=1
        )
        usage = gw.trial_usage("t1")
    assert via.model == "coder"  # re-labelled; the body is the engine's
    assert via.usage is not None
    assert via.usage.prompt_tokens == direct["usage"]["prompt_tokens"] > 5
    assert via.usage.completion_tokens == direct["usage"]["completion_tokens"]
    assert via.choices[0].message.content == direct["choices"][0]["message"]["content"]
    row = json.loads(tele.read_text().splitlines()[0])
    assert row["status"] == 200 and row["host"] == "llama" and row["stream"] is False
    assert row["prompt_tokens"] == direct["usage"]["prompt_tokens"]
    assert row["completion_tokens"] == direct["usage"]["completion_tokens"]
    assert usage["calls"] == 1
    assert usage["prompt_tokens"] == direct["usage"]["prompt_tokens"]


def test_a_stream_through_the_gateway_is_the_engines_stream(engine: str, tmp_path: Path) -> None:
    tele = tmp_path / "telemetry.jsonl"
    direct = _direct(engine, max_tokens=8)
    with GatewayServer(_fleet(engine), telemetry=tele) as gw:
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
    row = json.loads(tele.read_text().splitlines()[0])
    assert row["stream"] is True and row["status"] == 200
    assert row["ttft_from"] == "gateway" and 0 < row["ttft_s"] <= row["total_s"]
    # llama-cpp-python's server sends no usage chunk even when asked (include_usage): the
    # gateway counts the chunks that carried output instead (a byte of a character split
    # across tokens comes as an empty chunk, so the count can only fall short) and says so
    assert row["usage_estimated"] is True and row["prompt_tokens"] > 0
    assert 0 < row["completion_tokens"] <= direct["usage"]["completion_tokens"]
    assert usage["completion_tokens"] == row["completion_tokens"]
