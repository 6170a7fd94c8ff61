"""One router per job: a small HTTP service holding the job's routing state (load, measured
speeds, cooldowns, affinity) that every trial's gateway consults.

Why a service and not one gateway process attached to every trial network: trials run in
worker processes (and, later, on other machines), each with its own gateway container on
its own internal network, its own key and its own telemetry file. Keeping those gateways
and leasing hosts from one router keeps every isolation property as it is, needs no
container joined to many trial networks, and works across machines unchanged. The price
is one loopback/bridge round trip per attempt (``acquire``); ``release`` is sent without
waiting for it.

    with job_router(fleet_file):      # sets HARNESS_FLEET_ROUTER for the job's trials
        ... run trials ...
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import socket
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from harness.config.settings import read_env
from harness.errors import UserError
from harness.fleet.config import FleetConfig, load_fleet
from harness.fleet.lease import (
    Lease,
    LocalRouting,
    Outcome,
    build_router,
    lease_to_json,
    outcome_to_json,
)
from harness.fleet.probe import probe_fleet
from harness.fleet.router import Job
from harness.util.serving import ThreadedServer

ROUTER_ENV = "HARNESS_FLEET_ROUTER"  # the job's shared router URL, read by every trial's gateway


def router_app(routing: LocalRouting) -> Starlette:
    """The service: acquire, release, wait, snapshot (JSON over HTTP)."""

    async def acquire(request: Request) -> Response:
        body = await request.json()
        lease = routing.acquire_now(body["candidates"], Job(**body["job"]), body.get("exclude", []))
        return JSONResponse(
            {
                "lease": lease_to_json(lease) if lease else None,
                "avg_completion": routing.router.avg_completion,
            }
        )

    async def release(request: Request) -> Response:
        body = await request.json()
        routing.release(Lease(**body["lease"]), Outcome(**body["outcome"]))
        return JSONResponse({"ok": True})

    async def wait(request: Request) -> Response:
        body = await request.json()
        return JSONResponse({"wait_s": routing.wait_now(body["candidates"])})

    async def snapshot(request: Request) -> Response:
        return JSONResponse(routing.snapshot_now())

    async def health(request: Request) -> Response:
        return JSONResponse({"ok": True})

    return Starlette(
        routes=[
            Route("/acquire", acquire, methods=["POST"]),
            Route("/release", release, methods=["POST"]),
            Route("/wait", wait, methods=["POST"]),
            Route("/snapshot", snapshot),
            Route("/health", health),
        ]
    )


class RemoteRouting:
    """The ``Routing`` a trial's gateway uses when its job shares one router."""

    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")
        self.avg_completion = 256.0
        self._client: httpx.AsyncClient | None = None
        self._pending: set[asyncio.Task[None]] = set()

    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=httpx.Timeout(10.0, connect=5.0))
        return self._client

    async def acquire(self, candidates: list[str], job: Job, exclude: list[str]) -> Lease | None:
        r = await self.client.post(
            self.url + "/acquire",
            json={
                "candidates": candidates,
                "job": {
                    "trial": job.trial,
                    "prompt_tokens": job.prompt_tokens,
                    "completion_tokens": job.completion_tokens,
                },
                "exclude": list(exclude),
            },
        )
        r.raise_for_status()
        data = r.json()
        self.avg_completion = float(data.get("avg_completion") or self.avg_completion)
        return Lease(**data["lease"]) if data["lease"] else None

    def release(self, lease: Lease, outcome: Outcome) -> None:
        body = {"lease": lease_to_json(lease), "outcome": outcome_to_json(outcome)}

        async def send() -> None:
            with contextlib.suppress(httpx.HTTPError):
                await self.client.post(self.url + "/release", json=body)

        task = asyncio.get_running_loop().create_task(send())
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def wait_s(self, candidates: list[str]) -> float:
        r = await self.client.post(self.url + "/wait", json={"candidates": candidates})
        r.raise_for_status()
        return float(r.json()["wait_s"])

    def expected_completion(self, max_tokens: int | None) -> int:
        guess = int(self.avg_completion)
        return max(1, min(max_tokens, guess)) if max_tokens and max_tokens > 0 else guess

    def learn_slots(self, host: str, slots: int) -> None:
        return None  # the service probes the hosts itself

    async def snapshot(self) -> dict[str, Any]:
        r = await self.client.get(self.url + "/snapshot")
        r.raise_for_status()
        return dict(r.json())

    async def aclose(self) -> None:
        if self._pending:
            await asyncio.gather(*self._pending, return_exceptions=True)
        if self._client is not None:
            await self._client.aclose()


class RouterService:
    """The job's router in a background thread."""

    def __init__(
        self,
        fleet: FleetConfig,
        host: str = "127.0.0.1",
        port: int = 0,
        bench: dict[str, dict[str, float]] | None = None,
        probe_timeout_s: float = 3.0,
    ) -> None:
        self.fleet = fleet
        self.routing = LocalRouting(build_router(fleet, bench))
        self.probe_timeout_s = probe_timeout_s
        self._server = ThreadedServer(router_app(self.routing), host, port)

    @property
    def url(self) -> str:
        return self._server.url

    def start(self) -> RouterService:
        statuses = probe_fleet(self.fleet, self.probe_timeout_s) if self.fleet.hosts else {}
        for h in self.fleet.hosts:
            st = statuses.get(h.name)
            slots = [m.parallel for m in st.models.values() if m.parallel] if st else []
            if h.max_parallel is None and slots:
                self.routing.learn_slots(h.name, max(slots))
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()

    def __enter__(self) -> RouterService:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def bridge_address() -> str:
    """Where gateway containers (on Docker's default bridge) reach this machine: the
    bridge's gateway address; loopback when there is no Docker bridge."""
    with contextlib.suppress(Exception):
        import docker

        net = docker.from_env().networks.get("bridge")
        for cfg in net.attrs.get("IPAM", {}).get("Config") or []:
            if cfg.get("Gateway"):
                return str(cfg["Gateway"])
        name = (net.attrs.get("Options") or {}).get("com.docker.network.bridge.name", "docker0")
        return _interface_ipv4(name)
    return "127.0.0.1"


def _interface_ipv4(name: str) -> str:
    """The IPv4 address of a network interface (Linux ``SIOCGIFADDR``)."""

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        packed = fcntl.ioctl(s.fileno(), 0x8915, struct.pack("256s", name[:15].encode()))
    return socket.inet_ntoa(packed[20:24])


@contextlib.contextmanager
def job_router(fleet_file: str | Path | None, host: str | None = None) -> Iterator[str | None]:
    """Run the job's shared router while the block runs and name it in
    ``HARNESS_FLEET_ROUTER`` (the trials' gateways, local or in containers, use it). Yields
    its URL; None (and nothing started) without a fleet file."""
    if fleet_file is None or not Path(fleet_file).is_file():
        yield None
        return
    try:
        fleet = load_fleet(fleet_file)
    except UserError:
        fleet = FleetConfig()  # the trials will report the broken file themselves
    if not fleet.hosts:
        yield None
        return
    service = RouterService(fleet, host or bridge_address())
    old = read_env(ROUTER_ENV)
    with service:
        os.environ.update({ROUTER_ENV: service.url})  # for the trials (a write)
        try:
            yield service.url
        finally:
            if old is None:
                os.environ.pop(ROUTER_ENV, None)
            else:
                os.environ.update({ROUTER_ENV: old})
