"""The gateway's in-container entry point: ``python -m harness.gateway.inside [options]``.

It uses only what the gateway image installs (argparse, no typer); the host side that
starts it lives with each backend (``harness.backends.docker.gateway``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import yaml

from harness.config.budget import Budget
from harness.fleet.config import FleetConfig, load_fleet
from harness.gateway import build_config, serve
from harness.gateway.files import PORT


def serve_main(argv: list[str]) -> None:
    """Parse ``argv`` (the options after ``serve``) and serve until killed."""
    parser = argparse.ArgumentParser(prog="python -m harness.gateway.inside")
    parser.add_argument("--host", default="0.0.0.0", help="address to bind (all, in a container)")
    parser.add_argument("--port", type=int, default=PORT)
    parser.add_argument("--fleet", type=Path)
    parser.add_argument("--keys", type=Path)
    parser.add_argument("--telemetry", type=Path)
    parser.add_argument("--replay", type=Path)
    parser.add_argument("--record", type=Path)
    parser.add_argument("--budget", help="the trial's Budget as JSON")
    parser.add_argument("--router", help="the job's shared router URL")
    ns = parser.parse_args(argv)
    data = (yaml.safe_load(ns.fleet.read_text()) or {}) if ns.fleet and ns.fleet.is_file() else {}
    fleet: Any = load_fleet(ns.fleet) if data.get("hosts") else FleetConfig()
    prices = data.get("prices")
    config = build_config(
        fleet,
        prices=prices,
        telemetry=ns.telemetry,
        record=ns.record,
        replay=ns.replay,
        keys_file=ns.keys,
        require_keys=ns.keys is not None,
        budget=Budget.model_validate(json.loads(ns.budget)) if ns.budget else None,
        router_url=ns.router,
    )
    serve(config, ns.host, ns.port)


def main() -> None:
    """``python -m harness.gateway.inside [serve] [options]``."""
    argv = sys.argv[1:]
    serve_main(argv[1:] if argv[:1] == ["serve"] else argv)


if __name__ == "__main__":
    main()
