"""The fleet: model hosts, the router, its telemetry, and cassettes of recorded traffic.

A job's trials each get their own gateway (``harness.gateway``: own address, key, telemetry
file, budget); they lease hosts from one shared router (``router_service.job_router``), so
routing sees the job. The gateway sits above the fleet, so its names live in
``harness.gateway`` (``from harness.gateway import GatewayServer``), not here::

    from harness.fleet import load_fleet, fleet_fingerprint, job_router
"""

from __future__ import annotations

from harness.fleet.config import FleetConfig, Price, load_fleet, parse_fleet
from harness.fleet.probe import fleet_fingerprint
from harness.fleet.router_service import RouterService, job_router
from harness.fleet.telemetry import summarize, trial_usage_from_file

__all__ = [
    "FleetConfig",
    "Price",
    "RouterService",
    "fleet_fingerprint",
    "job_router",
    "load_fleet",
    "parse_fleet",
    "summarize",
    "trial_usage_from_file",
]
