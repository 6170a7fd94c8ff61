"""The fleet: model hosts, the router, the gateway every agent talks to, its telemetry,
and cassettes of recorded traffic.

A job's trials each get their own gateway (own address, key, telemetry file, budget);
they lease hosts from one shared router (``router_service.job_router``), so routing sees the job.

The trial runner's entry points (imported lazily, so ``python -m harness.gateway.inside``
runs cleanly)::

    from harness.fleet import GatewayServer, load_fleet, fleet_fingerprint
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    "FleetConfig": "config",
    "Price": "config",
    "load_fleet": "config",
    "parse_fleet": "config",
    "GatewayConfig": "gateway",
    "GatewayServer": "gateway",
    "build_config": "gateway",
    "RouterService": "shared",
    "job_router": "shared",
    "fleet_fingerprint": "probe",
    "summarize": "telemetry",
    "trial_usage_from_file": "telemetry",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(f"harness.fleet.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module 'harness.fleet' has no attribute {name!r}")
