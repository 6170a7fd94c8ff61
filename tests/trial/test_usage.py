"""A trial's usage: turns add up, host counts merge, and the agent's own claim is kept
beside the gateway's measure and flagged when it disagrees."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.trial.usage import gateway_usage, merge_usage

pytestmark = pytest.mark.unit


def test_turns_add_up_and_hosts_merge() -> None:
    first = {"calls": 2, "cost_usd": 0.5, "hosts": {"a": 1}, "engine": "vllm", "capped": False}
    second = {"calls": 3, "cost_usd": 0.25, "hosts": {"a": 2, "b": 1}, "engine": "sglang"}
    merged = merge_usage(first, {**second, "capped": True})
    assert merged == {
        "calls": 5,
        "cost_usd": 0.75,
        "hosts": {"a": 3, "b": 1},
        "engine": "sglang",  # a word is the last turn's
        "capped": True,  # a flag is never added up
    }
    assert merged["capped"] is True and merge_usage(first, first)["capped"] is False
    assert first["hosts"] == {"a": 1}  # the run's usage so far is not changed in place
    assert merge_usage({}, first) == first


class _Gateway:
    def __init__(self, usage: dict[str, Any]) -> None:
        self.usage = usage

    def collect(self, dest: Path) -> dict[str, Any]:
        return self.usage


def test_the_agent_s_claim_is_kept_beside_the_measure(tmp_path: Path) -> None:
    gw: Any = _Gateway({"prompt_tokens": 900, "completion_tokens": 100})
    assert gateway_usage(gw, tmp_path, {}) == {"prompt_tokens": 900, "completion_tokens": 100}
    close = gateway_usage(gw, tmp_path, {"total_tokens": 1040})
    assert close["self_reported"] == {"total_tokens": 1040} and "self_report_disagrees" not in close
    far = gateway_usage(gw, tmp_path, {"total_tokens": 1200})
    assert far["self_report_disagrees"] is True
    none_measured = gateway_usage(_Gateway({}), tmp_path, {"total_tokens": 5})  # type: ignore[arg-type]
    assert "self_report_disagrees" not in none_measured
