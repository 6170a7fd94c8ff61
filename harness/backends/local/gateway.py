"""The gateway as a thread on 127.0.0.1, for ``--sandbox local`` trials on the host."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import yaml

from harness.config.budget import Budget
from harness.config.entrants import LLMEntry
from harness.fleet.config import FleetConfig, load_fleet
from harness.fleet.telemetry import trial_usage_from_file
from harness.gateway.files import cassette_name, gateway_files, shared_router_url


class LocalGateway:
    """Same surface as ``TrialGateway``: start, url, key, budget_url, collect, stop.

    ``budget`` caps the trial's spending (the gateway refuses calls past it, HTTP 429
    ``budget_exceeded``); ``router_url`` is the job's shared router (default: the one named
    by ``HARNESS_FLEET_ROUTER``, else a router of its own).
    """

    image_id: str | None = None  # runs in this process: no image

    def __init__(
        self,
        *,
        trial: str,
        agent: str,
        llm: LLMEntry,
        fleet_file: Path | None,
        replay: Path | None,
        record: bool = False,
        budget: Budget | None = None,
        router_url: str | None = None,
    ) -> None:
        self.trial, self.agent, self.llm = trial, agent, llm
        self.fleet_file, self.replay, self.record = fleet_file, replay, record
        self.budget = budget
        self.router_url = router_url if router_url is not None else shared_router_url()
        self.tmp = Path(tempfile.mkdtemp(prefix="harness-gw-"))
        self.server: Any = None
        self.key = ""

    @property
    def url(self) -> str:
        return str(self.server.base_url)

    @property
    def budget_url(self) -> str:
        """``GET`` it with the trial's key: ``{"exhausted", "used", "limit"}``."""
        return self.url + "/harness/budget"

    def start(self) -> None:

        from harness.gateway import GatewayServer

        self.key = gateway_files(
            self.tmp,
            trial=self.trial,
            agent=self.agent,
            llm=self.llm,
            fleet_file=self.fleet_file,
            replay=self.replay,
        )
        data = yaml.safe_load((self.tmp / "fleet.yml").read_text()) or {}
        fleet: Any = load_fleet(self.tmp / "fleet.yml") if data.get("hosts") else FleetConfig()
        out = self.tmp / "out"
        out.mkdir()
        self.server = GatewayServer(
            fleet,
            prices=data.get("prices"),
            telemetry=out / "telemetry.jsonl",
            record=out / "recording.jsonl" if self.record else None,
            replay=self.tmp / cassette_name(self.replay) if self.replay else None,
            keys_file=self.tmp / "keys.yml",
            require_keys=True,
            budget=self.budget,
            router_url=None if self.replay else self.router_url,
        )
        self.server.start()

    def budget_state(self) -> dict[str, Any]:
        """What ``GET /v1/harness/budget`` answers this trial's key."""
        return dict(self.server.budget_state(self.trial))

    def collect(self, dest: Path) -> dict[str, Any]:
        """Copy the gateway's record to ``dest``; return the trial's usage. The gateway is
        ended first, so a call still in flight is in the record as cut."""
        if self.server is not None:
            self.server.stop()
        dest.mkdir(parents=True, exist_ok=True)
        for item in (self.tmp / "out").iterdir():
            shutil.copy2(item, dest / item.name)
        telemetry = dest / "telemetry.jsonl"
        return trial_usage_from_file(telemetry, self.trial) if telemetry.exists() else {}

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)
