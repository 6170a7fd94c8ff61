"""Rate limits against the gateway's wall-clock retry budget: a per-minute quota (a host
answering 429 for longer than a few backoff steps) is waited out, not "beaten" by the
attempt count; a 429 that outlives the budget is a harness fault, so the trial ends as
``error`` and never as a graded reply; a Retry-After longer than what is left of the
budget ends the retries at once instead of sleeping past it."""

from __future__ import annotations

import threading
import time
from typing import Any

import httpx
import pytest

from harness.fleet.config import FleetConfig, parse_fleet
from harness.gateway import GatewayServer
from harness.testing.lmstudio import Faults, TestHost

pytestmark = pytest.mark.integration

MODEL = "org/coder"
MSGS = [{"role": "user", "content": "x"}]


def _fleet(host: TestHost, **routing: Any) -> FleetConfig:
    return parse_fleet(
        {
            "hosts": [{"name": "only", "base_url": host.url, "watts": 200}],
            "models": {"coder": {"upstream": MODEL}},
            "routing": {"cooldown": {"base_s": 0.1, "max_s": 2}, "max_attempts": 3, **routing},
            "price_per_kwh": 0.5,
        }
    )


def _call(gw: GatewayServer, key: str) -> httpx.Response:
    return httpx.post(
        gw.base_url + "/chat/completions",
        json={"model": "coder", "max_tokens": 2, "messages": MSGS},
        headers={"Authorization": f"Bearer {key}"},
        timeout=60,
    )


def _fault(gw: GatewayServer, key: str) -> Any:
    r = httpx.get(gw.base_url + "/harness/budget", headers={"Authorization": f"Bearer {key}"})
    r.raise_for_status()
    return r.json()["fault"]


def test_a_quota_longer_than_the_attempts_is_waited_out() -> None:
    host = TestHost(models=[MODEL], faults=Faults(rate_limit_rate=1.0, retry_after=0.4))
    with host, GatewayServer(_fleet(host, retry_budget_s=20)) as gw:
        key = gw.issue_key("t1", "a", "coder")
        # the quota lasts 2 s: 3 attempts 0.4 s apart would all have been refused
        threading.Timer(2.0, lambda: host.state.set_faults(rate_limit_rate=0.0)).start()
        t0 = time.monotonic()
        r = _call(gw, key)
        waited = time.monotonic() - t0
        assert _fault(gw, key) is None
    assert r.status_code == 200, r.text
    assert waited >= 1.9
    assert host.stats["rate_limited"] >= 4  # more refusals than max_attempts allowed


def test_a_429_that_outlives_the_budget_is_a_harness_fault() -> None:
    host = TestHost(models=[MODEL], faults=Faults(rate_limit_rate=1.0, retry_after=0.3))
    with host, GatewayServer(_fleet(host, retry_budget_s=1.5)) as gw:
        key = gw.issue_key("t1", "a", "coder")
        r = _call(gw, key)
        fault = _fault(gw, key)
    assert r.status_code == 429
    assert fault is not None and "429" in fault and "retry_budget_s 1.5" in fault


def test_a_retry_after_past_the_budget_is_not_slept() -> None:
    host = TestHost(models=[MODEL], faults=Faults(rate_limit_rate=1.0, retry_after=60))
    with host, GatewayServer(_fleet(host, retry_budget_s=5)) as gw:
        key = gw.issue_key("t1", "a", "coder")
        t0 = time.monotonic()
        r = _call(gw, key)
        took = time.monotonic() - t0
        fault = _fault(gw, key)
    assert r.status_code == 429 and took < 3
    assert fault is not None and "rate-limited" in fault
