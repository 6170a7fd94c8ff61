"""Running the gateway: its configuration from options, in a background thread (the trial
runner, tests) or in the foreground (``harness gateway serve``, the gateway container)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.config.budget import Budget
from harness.errors import UserError
from harness.fleet.config import FleetConfig, Price, load_fleet
from harness.gateway.app import Gateway, GatewayConfig
from harness.gateway.keys import load_keys
from harness.gateway.sends import server_protocol
from harness.util.serving import KEEP_ALIVE_S, ThreadedServer


def build_config(
    fleet: FleetConfig | str | Path | None = None,
    *,
    prices: dict[str, Price | dict[str, Any]] | None = None,
    price_per_kwh: float | None = None,
    telemetry: str | Path | None = None,
    record: str | Path | None = None,
    replay: str | Path | None = None,
    keys_file: str | Path | None = None,
    require_keys: bool = True,
    bench: dict[str, dict[str, float]] | None = None,
    budget: Budget | None = None,
    router_url: str | None = None,
) -> GatewayConfig:
    if fleet is None:
        fleet_cfg = FleetConfig()
    elif isinstance(fleet, FleetConfig):
        fleet_cfg = fleet
    else:
        fleet_cfg = load_fleet(fleet)
    if not fleet_cfg.hosts and not replay:
        raise UserError(
            "the fleet has no hosts",
            file=fleet_cfg.source,
            field="hosts",
            fix="list at least one host, or use --replay FILE",
        )
    table = {
        k: v if isinstance(v, Price) else Price.model_validate(v) for k, v in (prices or {}).items()
    }
    if keys_file:
        load_keys(keys_file)  # fail at start on a broken file; the gateway re-reads it
    return GatewayConfig(
        fleet=fleet_cfg,
        prices=table,
        price_per_kwh=price_per_kwh,
        telemetry_path=telemetry,
        record_path=record,
        replay_path=replay,
        keys_file=keys_file,
        require_keys=require_keys,
        bench=bench,
        budget=budget,
        router_url=router_url,
    )


class GatewayServer:
    """The gateway in a background thread, for the trial runner and the tests.

    with GatewayServer(fleet_cfg, prices={...}, telemetry="t.jsonl", budget=Budget(calls=50)) as gw:
        key = gw.issue_key("trial-1", "mini-swe-agent", "qwen3-coder")
        ... agent uses gw.base_url with key ...
        gw.trial_usage("trial-1")
    """

    def __init__(
        self,
        fleet: FleetConfig | str | Path | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        routing: Any = None,
        **options: Any,
    ) -> None:
        options.setdefault("require_keys", True)
        self.config = build_config(fleet, **options)
        self.gateway = Gateway(self.config, routing)
        self._server = ThreadedServer(self.gateway.app, host, port, http=server_protocol())

    @property
    def port(self) -> int:
        return self._server.port

    @property
    def url(self) -> str:
        return self._server.url

    @property
    def base_url(self) -> str:
        """What an OpenAI client takes as ``base_url``."""
        return self.url + "/v1"

    def start(self) -> GatewayServer:
        self._server.start(timeout=30)
        return self

    def stop(self) -> None:
        self._server.stop()

    def __enter__(self) -> GatewayServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def issue_key(self, trial_id: str, agent: str | None = None, model: str | None = None) -> str:
        return self.gateway.issue_key(trial_id, agent, model)

    def trial_usage(self, trial_id: str) -> dict[str, Any]:
        return self.gateway.telemetry.trial_usage(trial_id)

    def telemetry(self, trial_id: str | None = None) -> list[dict[str, Any]]:
        return self.gateway.telemetry.records(trial_id)

    def budget_state(self, trial_id: str) -> dict[str, Any]:
        """What ``GET /v1/harness/budget`` answers for the trial."""
        return self.gateway.accounting.budget_state(trial_id)

    def fingerprint(self) -> dict[str, Any]:
        """The fleet fingerprint as probed when the gateway started."""
        return self.gateway.fingerprint()

    def hosts(self) -> dict[str, Any]:
        """Router state per host: rates, slots, in flight, cooldowns, failures."""
        routing = self.gateway.routing
        snap = getattr(routing, "snapshot_now", None)
        return snap() if snap else {}


def serve(config: GatewayConfig, host: str = "127.0.0.1", port: int = 8080) -> None:
    """Run the gateway in the foreground until interrupted."""
    import uvicorn

    gateway = Gateway(config)
    uvicorn.run(
        gateway.app,
        host=host,
        port=port,
        log_level="warning",
        timeout_graceful_shutdown=5,
        timeout_keep_alive=KEEP_ALIVE_S,
        http=server_protocol(),
        access_log=False,
    )
