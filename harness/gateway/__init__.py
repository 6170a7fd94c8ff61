"""The gateway: one OpenAI-compatible endpoint over the fleet, in parts.

- ``app``: the ASGI app (keys, model names, routes, budgets' refusals)
- ``upstream``: the fleet upstream (routing, upstream calls, retries)
- ``replay``: the cassette upstream (recorded traffic, no host)
- ``relay``: the one stream relay, with its one teardown
- ``accounting``: telemetry lines (one row builder), energy, recording, budgets
- ``server``: configuration, a background-thread server, the foreground ``serve``
- ``files``: what both placements share (port, folder, fleet.yml/keys.yml, the cassette)
- ``inside``: the in-container entry point (argparse only); each backend places it

    harness gateway serve --fleet fleet.yml --port 8080 --telemetry t.jsonl
    python -m harness.gateway.inside --host 0.0.0.0 --fleet fleet.yml --keys keys.yml
"""

from __future__ import annotations

from harness.gateway.app import Gateway, GatewayConfig
from harness.gateway.calls import Call, KeyInfo, prompt_estimate, retry_after_seconds
from harness.gateway.keys import load_keys
from harness.gateway.replay import replay_payload
from harness.gateway.server import GatewayServer, build_config, serve

__all__ = [
    "Call",
    "Gateway",
    "GatewayConfig",
    "GatewayServer",
    "KeyInfo",
    "build_config",
    "load_keys",
    "prompt_estimate",
    "replay_payload",
    "retry_after_seconds",
    "serve",
]
