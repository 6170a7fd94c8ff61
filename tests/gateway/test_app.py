"""The gateway's ASGI app, in-process over a cassette: keys checked on every route, the
models a key may ask for, bad bodies and unknown models refused with OpenAI-shaped errors,
a trial's budget enforced before the upstream is asked."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from harness.config.budget import Budget
from harness.fleet.config import parse_fleet
from harness.gateway.app import BUDGET, Gateway, GatewayConfig
from harness.gateway.calls import KeyInfo

pytestmark = pytest.mark.unit

KEY = {"authorization": "Bearer hk-a"}
USAGE = {"prompt_tokens": 5, "completion_tokens": 1}
ANSWER = {"request": {}, "response": {"content": "done", "usage": USAGE}}


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    tape = tmp_path / "tape.jsonl"
    tape.write_text(json.dumps(ANSWER) + "\n" + json.dumps(ANSWER) + "\n")
    fleet = parse_fleet({"hosts": [], "models": {"m": {"upstream": "org/m", "aliases": ["mm"]}}})
    config = GatewayConfig(
        fleet=fleet,
        replay_path=tape,
        keys={"hk-a": KeyInfo("t1", "codex", "m"), "hk-b": KeyInfo("t2")},
        require_keys=True,
        budget=Budget(calls=1),
        telemetry_path=tmp_path / "gw" / "telemetry.jsonl",
    )
    with TestClient(Gateway(config).app) as c:
        yield c


def test_keys_are_required_and_name_the_models_a_trial_may_use(client: TestClient) -> None:
    assert client.get("/v1/models").status_code == 401
    bad = client.get("/v1/models", headers={"authorization": "Bearer nope"})
    assert bad.json()["error"]["code"] == "invalid_api_key"
    ids = [m["id"] for m in client.get("/v1/models", headers=KEY).json()["data"]]
    assert ids == ["m", "mm"]
    assert client.get("/health").json() == {"ok": True}  # no key: liveness only
    assert client.get("/health", headers={"x-api-key": "hk-a"}).json()["replay_remaining"] == 2


def test_bad_bodies_and_unknown_models_are_refused(client: TestClient) -> None:
    url = "/v1/chat/completions"
    not_json = client.post(url, content=b"{", headers=KEY)
    assert not_json.status_code == 400 and "not valid JSON" in not_json.json()["error"]["message"]
    assert client.post(url, json=[1], headers=KEY).status_code == 400
    unpinned = {"authorization": "Bearer hk-b"}  # a key without a model of its own
    unknown = client.post(url, json={"model": "gpt-9", "messages": []}, headers=unpinned)
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "model_not_found"


def test_the_budget_is_spent_then_calls_are_refused(client: TestClient) -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "fix it"}]}
    first = client.post("/v1/chat/completions", json=body, headers=KEY)
    assert first.status_code == 200 and first.json()["choices"][0]["message"]["content"] == "done"
    second = client.post("/v1/chat/completions", json=body, headers=KEY)
    assert second.status_code == 429 and second.headers["x-should-retry"] == "false"
    assert second.json()["error"]["code"] == "budget_exceeded"
    state = client.get(BUDGET, headers=KEY).json()
    assert state["limit"]["calls"] == 1 and state["used"]["calls"] == 1
