"""Leasing hosts from the router: a router seeded with measured speeds, a lease per attempt,
a failed host cooled down, a lease released once, slots learnt only when not configured."""

from __future__ import annotations

import pytest

from harness.fleet.config import FleetConfig, parse_fleet
from harness.fleet.lease import LocalRouting, Outcome, build_router, lease_to_json
from harness.fleet.router import Job

pytestmark = pytest.mark.unit

JOB = Job("t1", prompt_tokens=1000, completion_tokens=100)


def _fleet() -> FleetConfig:
    return parse_fleet(
        {
            "hosts": [
                {"name": "a", "base_url": "http://a:1", "max_parallel": 2},
                {"name": "b", "base_url": "http://b:1"},
            ],
            "models": {"m": {"upstream": "org/m"}},
        }
    )


def test_the_router_is_seeded_with_measured_speeds_else_the_defaults() -> None:
    fleet = _fleet()
    router = build_router(fleet, {"a": {"prefill_tps": 900.0, "decode_tps": 45.0}})
    a, b = router.hosts["a"], router.hosts["b"]
    assert (a.prefill_tps, a.decode_tps, a.slots, a.slots_known) == (900.0, 45.0, 2, True)
    r = fleet.routing
    assert (b.prefill_tps, b.decode_tps) == (r.default_prefill_tps, r.default_decode_tps)
    assert (b.slots, b.slots_known) == (r.default_parallel, False)


def test_a_failed_host_cools_down_and_a_lease_is_released_once() -> None:
    routing = LocalRouting(build_router(_fleet(), {}))
    lease = routing.acquire_now(["a"], JOB, [])
    assert lease is not None and lease.host == "a" and lease.had_slot
    assert lease_to_json(lease)["id"] == lease.id
    assert routing.snapshot_now()["a"]["inflight"] == 1
    routing.release(lease, Outcome(ok=False, failed=True, retry_after=30.0))
    routing.release(lease, Outcome(ok=True, trial="t1", prompt=1000, completion=100, total_s=1.0))
    assert routing.router.affinity_host("t1") is None  # already released: nothing learnt
    snap = routing.snapshot_now()["a"]
    assert snap["inflight"] == 0 and snap["failures"] == 1 and snap["calls"] == 1
    assert routing.acquire_now(["a"], JOB, []) is None  # cooling down
    assert routing.wait_now(["a"]) > 0
    other = routing.acquire_now(["a", "b"], JOB, [])
    assert other is not None and other.host == "b"


def test_slots_are_learnt_only_for_a_host_without_a_configured_number() -> None:
    routing = LocalRouting(build_router(_fleet(), {}))
    routing.learn_slots("a", 8)
    routing.learn_slots("b", 0)
    routing.learn_slots("nope", 3)
    assert routing.router.hosts["a"].slots == 2 and routing.router.hosts["b"].slots == 1
    routing.learn_slots("b", 5)  # learnt once
    assert routing.router.hosts["b"].slots == 1
