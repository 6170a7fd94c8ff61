"""Pure routing: which host will finish this call first?

Each host is modelled as ``slots`` parallel servers with measured prefill and decode rates.
A call's work on a host is ``uncached prompt / prefill + completion / decode``; the calls
already in flight occupy the slots (first come, first served), so the new call's finish
is when a slot frees plus its own work. A trial stays on the host that holds its prompt
prefix in cache while that host has a free slot and its finish is within a slack of the
best (a slack only among hosts of like speed: leaving a slower home pays off every turn).
Failing hosts cool down (exponentially, or for the host's Retry-After).

No I/O and an injectable clock: everything here is testable with synthetic state.
"""

from __future__ import annotations

import heapq
import itertools
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from harness.fleet.config import Routing

EWMA = 0.3
MIN_PREFILL_SAMPLE = 64  # uncached prompt tokens needed to learn a prefill rate
MIN_DECODE_SAMPLE = 8
SOLO_FACTOR = 1.5  # a call this close to its solo time did not wait for a slot
MAX_LEARNED_SLOTS = 32
HOME_SPEED = 0.8  # a home host below this fraction of the best host's prefill rate is slower


@dataclass(frozen=True)
class Job:
    """What the router knows about a call before it runs (token counts are estimates)."""

    trial: str | None
    prompt_tokens: int
    completion_tokens: int


@dataclass
class InFlight:
    trial: str | None
    start: float
    expected_s: float


@dataclass
class HostState:
    name: str
    prefill_tps: float
    decode_tps: float
    slots: int = 1
    slots_known: bool = True  # configured or reported; else learned from measured concurrency
    watts: float | None = None
    inflight: dict[Any, InFlight] = field(default_factory=dict)
    cooldown_until: float = 0.0
    failures: int = 0  # consecutive
    total_failures: int = 0
    total_calls: int = 0
    cooldowns: int = 0
    incidents: int = 0
    last_failure_at: float = float("-inf")
    learned: bool = False

    def snapshot(self, now: float) -> dict[str, Any]:
        return {
            "prefill_tps": round(self.prefill_tps, 1),
            "decode_tps": round(self.decode_tps, 1),
            "slots": self.slots,
            "inflight": len(self.inflight),
            "cooling_s": round(max(0.0, self.cooldown_until - now), 3),
            "cooldowns": self.cooldowns,
            "incidents": self.incidents,
            "failures": self.total_failures,
            "calls": self.total_calls,
        }


@dataclass(frozen=True)
class Choice:
    host: str
    expected_s: float
    expected_finish: float
    cached_tokens: int
    reason: str


class Router:
    def __init__(
        self,
        hosts: Iterable[HostState],
        routing: Routing | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.routing = routing or Routing()
        self.clock = clock
        self.hosts: dict[str, HostState] = {h.name: h for h in hosts}
        self._affinity: dict[str, tuple[str, int]] = {}  # trial -> (host, context tokens)
        self._rr = itertools.count()
        self.avg_completion = 256.0

    # ---- estimates -------------------------------------------------------------------
    def cached_estimate(self, host: str, job: Job) -> int:
        if not self.routing.affinity:
            return 0
        aff = self._affinity.get(job.trial) if job.trial else None
        if aff and aff[0] == host:
            return min(job.prompt_tokens, aff[1])
        return 0

    def work_seconds(self, host: str, job: Job) -> float:
        h = self.hosts[host]
        new = max(0, job.prompt_tokens - self.cached_estimate(host, job))
        return new / h.prefill_tps + job.completion_tokens / h.decode_tps

    def expected_finish(self, host: str, job: Job, now: float | None = None) -> float:
        """Seconds from now until ``job`` would finish on ``host`` (FIFO over slots)."""
        now = self.clock() if now is None else now
        h = self.hosts[host]
        ordered = sorted(h.inflight.values(), key=lambda f: f.start)
        running, queued = ordered[: h.slots], ordered[h.slots :]
        free = [max(f.expected_s - (now - f.start), 0.05 * f.expected_s) for f in running]
        free += [0.0] * (h.slots - len(free))
        heapq.heapify(free)
        for q in queued:
            heapq.heappush(free, heapq.heappop(free) + q.expected_s)
        return heapq.heappop(free) + self.work_seconds(host, job)

    def expected_completion(self, max_tokens: int | None) -> int:
        guess = int(self.avg_completion)
        return max(1, min(max_tokens, guess)) if max_tokens and max_tokens > 0 else guess

    # ---- choosing --------------------------------------------------------------------
    def available(self, candidates: Iterable[str], now: float | None = None) -> list[str]:
        now = self.clock() if now is None else now
        return [c for c in candidates if c in self.hosts and self.hosts[c].cooldown_until <= now]

    def time_until_available(self, candidates: Iterable[str]) -> float:
        now = self.clock()
        waits = [
            max(0.0, self.hosts[c].cooldown_until - now) for c in candidates if c in self.hosts
        ]
        return min(waits) if waits else 0.0

    def choose(self, candidates: list[str], job: Job, exclude: Iterable[str] = ()) -> Choice | None:
        """The host for ``job`` among ``candidates``; hosts in ``exclude`` (already tried
        for this call) only when nothing else is available. None: all are cooling down."""
        now = self.clock()
        live = self.available(candidates, now)
        fresh = [c for c in live if c not in set(exclude)]
        pool = fresh or live
        if not pool:
            return None
        if self.routing.strategy == "round_robin":
            host = pool[next(self._rr) % len(pool)]
            return self._choice(host, job, now, "round_robin")
        finish = {c: self.expected_finish(c, job, now) for c in pool}
        best = min(pool, key=lambda c: (finish[c], len(self.hosts[c].inflight), c))
        aff = self._affinity.get(job.trial) if job.trial else None
        if self.routing.affinity and aff and aff[0] in finish and aff[0] != best:
            home = self.hosts[aff[0]]
            # the best host's finish already pays for re-reading the whole prompt; slack on
            # top only spares a warm cache among hosts of like speed: leaving a slower home
            # for a faster host also speeds up every later turn of the trial
            slower = home.prefill_tps < HOME_SPEED * self.hosts[best].prefill_tps
            slack = 1.0 if slower else self.routing.affinity_slack
            if len(home.inflight) < home.slots and finish[aff[0]] <= finish[best] * slack:
                return self._choice(aff[0], job, now, "affinity", finish[aff[0]])
        return self._choice(best, job, now, "earliest_finish", finish[best])

    def _choice(
        self, host: str, job: Job, now: float, reason: str, finish: float | None = None
    ) -> Choice:
        if finish is None:
            finish = self.expected_finish(host, job, now)
        return Choice(
            host, self.work_seconds(host, job), finish, self.cached_estimate(host, job), reason
        )

    # ---- bookkeeping -----------------------------------------------------------------
    def begin(self, host: str, call_id: Any, job: Job, expected_s: float) -> bool:
        """Mark a call in flight; returns whether it found a free slot."""
        h = self.hosts[host]
        free = len(h.inflight) < h.slots
        h.inflight[call_id] = InFlight(job.trial, self.clock(), expected_s)
        h.total_calls += 1
        return free

    def end(self, host: str, call_id: Any) -> None:
        self.hosts[host].inflight.pop(call_id, None)

    def succeeded(
        self,
        host: str,
        trial: str | None,
        *,
        prompt: int,
        cached: int,
        completion: int,
        ttft_s: float | None,
        total_s: float | None,
        had_slot: bool = True,
        expected_s: float | None = None,
    ) -> None:
        """Learn from a finished call: rates (when it did not queue), affinity, lengths."""
        h = self.hosts[host]
        h.failures = 0
        if trial:
            self._affinity[trial] = (host, prompt + completion)
        if completion > 0:
            self.avg_completion = (1 - EWMA) * self.avg_completion + EWMA * completion
        if not had_slot:
            # the model said this call would queue; if it ran at its solo speed anyway, the
            # host has more parallel slots than we know of (LM Studio's v0 API reports none)
            if (
                not h.slots_known
                and expected_s
                and total_s is not None
                and total_s <= SOLO_FACTOR * expected_s
                and h.slots < MAX_LEARNED_SLOTS
            ):
                h.slots += 1
            return
        new = prompt - cached
        if ttft_s and ttft_s > 0 and new >= MIN_PREFILL_SAMPLE:
            h.prefill_tps = (1 - EWMA) * h.prefill_tps + EWMA * (new / ttft_s)
            h.learned = True
        if ttft_s is not None and total_s and total_s > ttft_s and completion >= MIN_DECODE_SAMPLE:
            rate = (completion - 1) / (total_s - ttft_s)
            h.decode_tps = (1 - EWMA) * h.decode_tps + EWMA * rate
            h.learned = True

    def failed(
        self, host: str, retry_after: float | None = None, started: float | None = None
    ) -> float:
        """Cool a failing host down; returns the cooldown in seconds.

        One incident is one failure event: a call that ``started`` before the host's last
        recorded failure was in flight when the host went down, so its failure adds to that
        incident (counted, but no longer cooldown) instead of escalating as if consecutive.
        """
        h = self.hosts[host]
        now = self.clock()
        h.total_failures += 1
        if started is not None and started <= h.last_failure_at and retry_after is None:
            return max(0.0, h.cooldown_until - now)
        h.last_failure_at = now
        h.incidents += 1
        h.failures += 1
        cd = self.routing.cooldown
        if retry_after is not None:
            secs = min(max(0.0, retry_after), max(cd.max_s, retry_after))
        else:
            secs = min(cd.base_s * 2 ** (h.failures - 1), cd.max_s)
        h.cooldown_until = max(h.cooldown_until, now + secs)
        h.cooldowns += 1
        return secs

    def affinity_host(self, trial: str) -> str | None:
        aff = self._affinity.get(trial)
        return aff[0] if aff else None

    def snapshot(self) -> dict[str, Any]:
        now = self.clock()
        return {name: h.snapshot(now) for name, h in self.hosts.items()}
