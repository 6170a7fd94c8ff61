"""The gateway as a thread on 127.0.0.1 for ``--sandbox local`` (backends/local/gateway.py),
served from a cassette."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import httpx
import pytest

from harness.backends.local.gateway import LocalGateway
from harness.config.budget import Budget
from harness.config.entrants import LLMEntry

pytestmark = pytest.mark.integration

LLM = LLMEntry(name="replay-test", model="replay-model-1")
REPLY = {
    "request": {"model": "replay-model-1"},
    "response": {
        "content": "done",
        "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15},
    },
}


def test_a_local_gateway_serves_records_and_cleans_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    tape = tmp_path / "my tape.json"
    tape.write_text(json.dumps([REPLY]))
    gw = LocalGateway(
        trial="t1", agent="a", llm=LLM, fleet_file=None, replay=tape,
        budget=Budget(calls=5),
    )  # fmt: skip
    assert gw.image_id is None
    gw.start()
    try:
        assert gw.key.startswith("hk-") and gw.url.startswith("http://127.0.0.1:")
        assert gw.budget_url == gw.url + "/harness/budget"
        body = {"model": "replay-model-1", "messages": [{"role": "user", "content": "hi"}]}
        headers = {"Authorization": f"Bearer {gw.key}"}
        reply = httpx.post(gw.url + "/chat/completions", json=body, headers=headers, timeout=30)
        assert reply.status_code == 200, reply.text
        refused = httpx.post(gw.url + "/chat/completions", json=body, timeout=30)
        assert refused.status_code in (401, 403)  # keys are required
        state = gw.budget_state()
        assert not state["exhausted"] and state["used"]["calls"] == 1
        assert state["limit"]["calls"] == 5
        usage = gw.collect(tmp_path / "out")
    finally:
        gw.stop()
    assert usage["calls"] == 1 and usage["prompt_tokens"] == 12
    assert (tmp_path / "out" / "telemetry.jsonl").is_file()
    assert list(scratch.iterdir()) == []  # its folder removed
    gw.stop()  # twice: harmless
