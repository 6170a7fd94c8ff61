"""The gateway's view of the router: lease a host for an attempt, release it with how it
went. ``LocalRouting`` holds a ``Router`` in this process (thread-safe, so gateways in
several threads can share one); ``harness.fleet.router_service`` serves one over HTTP so that
every trial gateway of a job shares one routing state.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from harness.fleet.bench import load_bench
from harness.fleet.config import FleetConfig
from harness.fleet.router import HostState, Job, Router


@dataclass(frozen=True)
class Lease:
    """One attempt's hold on a host, from ``acquire`` to ``release``."""

    id: str
    host: str
    expected_s: float
    had_slot: bool
    started: float  # on the router's clock


@dataclass(frozen=True)
class Outcome:
    """How an attempt ended, for the router to learn from."""

    ok: bool
    trial: str | None = None
    prompt: int = 0
    cached: int = 0
    completion: int = 0
    ttft_s: float | None = None
    total_s: float | None = None
    failed: bool = False  # the host failed (cool it down); not ok and not failed: no verdict
    retry_after: float | None = None


class Routing(Protocol):
    async def acquire(self, candidates: list[str], job: Job, exclude: list[str]) -> Lease | None:
        """Choose a host and hold a place on it; None when every candidate cools down."""

    def release(self, lease: Lease, outcome: Outcome) -> None:
        """End the lease (never blocks on I/O)."""

    async def wait_s(self, candidates: list[str]) -> float:
        """Seconds until a candidate is out of its cooldown."""

    def expected_completion(self, max_tokens: int | None) -> int: ...

    def learn_slots(self, host: str, slots: int) -> None:
        """Parallel slots a host reports (when its configuration names none)."""

    async def snapshot(self) -> dict[str, Any]: ...

    async def aclose(self) -> None: ...


def build_router(fleet: FleetConfig, bench: dict[str, dict[str, float]] | None = None) -> Router:
    """A router over the fleet's hosts, seeded with the measured speeds (``fleet bench``)."""
    if bench is None:
        bench = load_bench(fleet.bench_path()) if fleet.hosts else {}
    r = fleet.routing
    return Router(
        [
            HostState(
                h.name,
                prefill_tps=float(
                    bench.get(h.name, {}).get("prefill_tps") or r.default_prefill_tps
                ),
                decode_tps=float(bench.get(h.name, {}).get("decode_tps") or r.default_decode_tps),
                slots=h.max_parallel or r.default_parallel,
                slots_known=h.max_parallel is not None,
                watts=h.watts,
            )
            for h in fleet.hosts
        ],
        r,
    )


class LocalRouting:
    """A ``Router`` in this process behind a lock."""

    def __init__(self, router: Router) -> None:
        self.router = router
        self._lock = threading.Lock()
        self._ids = itertools.count()
        self._leases: dict[str, Lease] = {}

    def acquire_now(self, candidates: list[str], job: Job, exclude: Iterable[str]) -> Lease | None:
        with self._lock:
            choice = self.router.choose(candidates, job, exclude=exclude)
            if choice is None:
                return None
            lease_id = f"l{next(self._ids)}"
            had_slot = self.router.begin(choice.host, lease_id, job, choice.expected_s)
            lease = Lease(lease_id, choice.host, choice.expected_s, had_slot, self.router.clock())
            self._leases[lease_id] = lease
            return lease

    async def acquire(self, candidates: list[str], job: Job, exclude: list[str]) -> Lease | None:
        return self.acquire_now(candidates, job, exclude)

    def release(self, lease: Lease, outcome: Outcome) -> None:
        with self._lock:
            if self._leases.pop(lease.id, None) is None:
                return  # released already
            r = self.router
            if outcome.failed:
                r.failed(lease.host, outcome.retry_after, started=lease.started)
            r.end(lease.host, lease.id)
            if outcome.ok:
                r.succeeded(
                    lease.host,
                    outcome.trial,
                    prompt=outcome.prompt,
                    cached=outcome.cached,
                    completion=outcome.completion,
                    ttft_s=outcome.ttft_s,
                    total_s=outcome.total_s,
                    had_slot=lease.had_slot,
                    expected_s=lease.expected_s,
                )

    def wait_now(self, candidates: list[str]) -> float:
        with self._lock:
            return self.router.time_until_available(candidates)

    async def wait_s(self, candidates: list[str]) -> float:
        return self.wait_now(candidates)

    def expected_completion(self, max_tokens: int | None) -> int:
        return self.router.expected_completion(max_tokens)

    def learn_slots(self, host: str, slots: int) -> None:
        with self._lock:
            h = self.router.hosts.get(host)
            if h is not None and not h.slots_known:
                h.slots = max(1, slots)
                h.slots_known = True

    def snapshot_now(self) -> dict[str, Any]:
        with self._lock:
            return self.router.snapshot()

    async def snapshot(self) -> dict[str, Any]:
        return self.snapshot_now()

    async def aclose(self) -> None:
        return None


def lease_to_json(lease: Lease) -> dict[str, Any]:
    return asdict(lease)


def outcome_to_json(outcome: Outcome) -> dict[str, Any]:
    return asdict(outcome)
