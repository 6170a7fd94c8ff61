"""The gateway as a thread on 127.0.0.1, for ``--sandbox local`` trials on the host."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from harness.fleet.container import cassette_name, gateway_files
from harness.registry import LLMEntry


class LocalGateway:
    """Same surface as ``TrialGateway``: start, url, key, collect, stop."""

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
    ) -> None:
        self.trial, self.agent, self.llm = trial, agent, llm
        self.fleet_file, self.replay, self.record = fleet_file, replay, record
        self.tmp = Path(tempfile.mkdtemp(prefix="harness-gw-"))
        self.server: Any = None
        self.key = ""

    @property
    def url(self) -> str:
        return str(self.server.base_url)

    def start(self) -> None:
        import yaml

        from harness.fleet.config import FleetConfig, load_fleet
        from harness.fleet.gateway import GatewayServer

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
        )
        self.server.start()

    def collect(self, dest: Path) -> dict[str, Any]:
        from harness.fleet.telemetry import trial_usage_from_file

        dest.mkdir(parents=True, exist_ok=True)
        for item in (self.tmp / "out").iterdir():
            shutil.copy2(item, dest / item.name)
        telemetry = dest / "telemetry.jsonl"
        return trial_usage_from_file(telemetry, self.trial) if telemetry.exists() else {}

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)
