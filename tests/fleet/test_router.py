"""Routing with synthetic state and a fake clock: earliest finish, slots, affinity,
cooldowns, round robin, learning rates."""

import pytest

from harness.fleet.config import Cooldown, Routing
from harness.fleet.router import HostState, Job, Router

pytestmark = pytest.mark.unit


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def make(routing=None, **slots):
    clock = Clock()
    hosts = [
        HostState("slow", 350, 40, slots=slots.get("slow", 1)),
        HostState("mid", 1200, 40, slots=slots.get("mid", 1)),
        HostState("fast", 2200, 40, slots=slots.get("fast", 1)),
    ]
    return Router(hosts, routing or Routing(), clock), clock


ALL = ["slow", "mid", "fast"]


def test_work_seconds_and_fastest_host_first():
    r, _ = make()
    job = Job("t1", 2200, 40)
    assert r.work_seconds("fast", job) == pytest.approx(1.0 + 1.0)
    assert r.choose(ALL, job).host == "fast"


def test_load_spreads_by_expected_finish():
    r, _ = make()
    picks = []
    for i in range(3):
        job = Job(f"t{i}", 4400, 0)  # fast: 2 s, mid: 3.7 s, slow: 12.6 s
        c = r.choose(ALL, job)
        r.begin(c.host, i, job, c.expected_s)
        picks.append(c.host)
    # second call would wait 2 s on fast (finish 4 s) so mid (3.7 s) wins; third: fast again
    assert picks == ["fast", "mid", "fast"]


def test_parallel_slots_are_free_capacity():
    r, _ = make(fast=3)
    for i in range(3):
        job = Job(f"t{i}", 4400, 0)
        c = r.choose(ALL, job)
        assert c.host == "fast"
        r.begin(c.host, i, job, c.expected_s)
    assert r.expected_finish("fast", Job("x", 4400, 0)) == pytest.approx(4.0)


def test_queue_simulation_counts_elapsed_time():
    r, clock = make()
    job = Job("a", 4400, 0)
    r.begin("fast", "a", job, 2.0)
    clock.t += 1.5
    assert r.expected_finish("fast", job) == pytest.approx(0.5 + 2.0)


def test_affinity_keeps_a_trial_on_its_warm_host():
    r, _ = make()
    r.succeeded("mid", "t1", prompt=4000, cached=0, completion=100, ttft_s=None, total_s=None)
    job = Job("t1", 4400, 50)
    assert r.cached_estimate("mid", job) == 4100
    c = r.choose(ALL, job)
    assert c.host == "mid" and c.cached_tokens == 4100
    # another trial with the same prompt size goes to the fastest host
    assert r.choose(ALL, Job("t2", 4400, 50)).host == "fast"


def test_affinity_yields_when_home_is_overloaded_or_too_slow():
    r, _ = make()
    r.succeeded("slow", "t1", prompt=100, cached=0, completion=10, ttft_s=None, total_s=None)
    # home is slow and the new prompt is mostly new: 9000 tokens / 350 vs / 2200
    assert r.choose(ALL, Job("t1", 9000, 10)).host == "fast"
    r2, _ = make()
    r2.succeeded("mid", "t1", prompt=4000, cached=0, completion=0, ttft_s=None, total_s=None)
    r2.begin("mid", "other", Job("t9", 100, 1), 5.0)  # its only slot is taken
    assert r2.choose(ALL, Job("t1", 4400, 10)).host != "mid"
    r3, _ = make(Routing(affinity=False))
    r3.succeeded("mid", "t1", prompt=4000, cached=0, completion=0, ttft_s=None, total_s=None)
    assert r3.choose(ALL, Job("t1", 4400, 10)).host == "fast"


def test_cooldown_exponential_then_reset_and_retry_after():
    r, clock = make(Routing(cooldown=Cooldown(base_s=1, max_s=5)))
    assert [r.failed("fast") for _ in range(4)] == [1, 2, 4, 5]
    assert r.choose(ALL, Job("t", 10, 1)).host != "fast"
    assert r.time_until_available(["fast"]) == pytest.approx(5)
    clock.t += 5
    assert r.choose(["fast"], Job("t", 10, 1)).host == "fast"
    r.succeeded("fast", "t", prompt=10, cached=0, completion=1, ttft_s=None, total_s=None)
    assert r.failed("fast") == 1  # consecutive count was reset
    assert r.failed("mid", retry_after=7.5) == 7.5


def test_all_cooling_means_no_choice_and_a_wait():
    r, _ = make()
    for h in ALL:
        r.failed(h, retry_after=3)
    r.hosts["slow"].cooldown_until -= 2
    assert r.choose(ALL, Job("t", 10, 1)) is None
    assert r.time_until_available(ALL) == pytest.approx(1)


def test_excluded_hosts_only_as_last_resort():
    r, _ = make()
    assert r.choose(ALL, Job("t", 10, 1), exclude=["fast"]).host != "fast"
    assert r.choose(["fast"], Job("t", 10, 1), exclude=["fast"]).host == "fast"


def test_round_robin_ignores_speed():
    r, _ = make(Routing(strategy="round_robin"))
    picks = [r.choose(ALL, Job(f"t{i}", 1000, 1)).host for i in range(6)]
    assert picks == ALL * 2


def test_learns_rates_only_from_unqueued_calls():
    r, _ = make()
    r.succeeded("slow", "t", prompt=1000, cached=0, completion=41, ttft_s=1.0, total_s=2.0)
    assert r.hosts["slow"].prefill_tps == pytest.approx(0.7 * 350 + 0.3 * 1000)
    assert r.hosts["slow"].decode_tps == pytest.approx(40)
    before = r.hosts["mid"].prefill_tps
    r.succeeded(
        "mid", "t", prompt=1000, cached=0, completion=41, ttft_s=9.0, total_s=10.0, had_slot=False
    )
    assert r.hosts["mid"].prefill_tps == before


def test_expected_completion_uses_max_tokens_or_history():
    r, _ = make()
    assert r.expected_completion(50) == 50
    assert r.expected_completion(None) == 256
    r.succeeded("fast", None, prompt=10, cached=0, completion=56, ttft_s=None, total_s=None)
    assert r.expected_completion(None) == 196


def test_one_host_incident_is_one_failure_event():
    r, clock = make(Routing(cooldown=Cooldown(base_s=2, max_s=60)))
    job = Job("t", 100, 10)
    for i in range(6):  # six calls in flight when the host dies
        r.begin("fast", i, job, 1.0)
    started = clock.t
    clock.t += 1
    cooldowns = [r.failed("fast", started=started) for _ in range(6)]
    h = r.hosts["fast"]
    assert cooldowns[0] == 2 and all(c <= 2 for c in cooldowns[1:])
    assert h.incidents == 1 and h.failures == 1 and h.total_failures == 6
    assert h.cooldown_until == clock.t + 2
    # a call sent after the incident that fails again is a new one: the cooldown grows
    clock.t += 3
    r.begin("fast", "late", job, 1.0)
    late = clock.t
    clock.t += 0.5
    assert r.failed("fast", started=late) == 4 and h.incidents == 2


def test_slots_of_a_host_that_reports_none_are_learned_from_concurrency():
    clock = Clock()
    v0 = HostState("v0", 1000, 100, slots=1, slots_known=False)
    known = HostState("known", 1000, 100, slots=1)
    r = Router([v0, known], Routing(), clock)
    for host in ("v0", "known"):
        job = Job("t", 1000, 10)
        assert r.begin(host, "a", job, 1.1)
        assert not r.begin(host, "b", job, 1.1)  # the model says: this one queues
        clock.t += 1.2  # but it finishes in its solo time: it did not wait
        r.end(host, "b")
        r.succeeded(
            host,
            "t",
            prompt=1000,
            cached=0,
            completion=10,
            ttft_s=1.0,
            total_s=1.2,
            had_slot=False,
            expected_s=1.1,
        )
    assert r.hosts["v0"].slots == 2 and r.hosts["known"].slots == 1


def test_affinity_slack_spares_a_warm_cache_only_among_hosts_of_like_speed():
    clock = Clock()
    hosts = [
        HostState("slow", 350, 35),
        HostState("fast", 2200, 220),
        HostState("fast2", 1800, 180),
    ]
    r = Router(hosts, Routing(affinity_slack=2.0), clock)
    # a trial warm on the slow host: its next turn is sooner on the (cold, busy) fast host,
    # though within the slack; it leaves, and every later turn of the trial runs faster
    r.succeeded("slow", "t1", prompt=2000, cached=0, completion=50, ttft_s=None, total_s=None)
    r.begin("fast", "busy", Job("t9", 100, 1), 0.5)
    job = Job("t1", 2600, 60)
    assert r.expected_finish("slow", job) <= 2.0 * r.expected_finish("fast", job)
    assert r.choose(["slow", "fast"], job).host == "fast"
    r.end("fast", "busy")
    # warm on a host of like speed whose finish is a little later: it stays there
    r.succeeded("fast2", "t2", prompt=80, cached=0, completion=20, ttft_s=None, total_s=None)
    job = Job("t2", 2600, 60)
    assert r.expected_finish("fast", job) < r.expected_finish("fast2", job)
    c = r.choose(["fast", "fast2"], job)
    assert c.host == "fast2" and c.reason == "affinity"
