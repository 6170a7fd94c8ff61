"""What both placements of a trial's gateway share: its port and folder inside a container,
the files it reads (fleet.yml, keys.yml, the cassette) and the job's shared router.
"""

from __future__ import annotations

import secrets
import shutil
from pathlib import Path
from typing import Any

import yaml

from harness.config.entrants import LLMEntry
from harness.config.settings import read_env
from harness.fleet.router_service import ROUTER_ENV

PORT = 8080
ROOT = "/gw"


def shared_router_url() -> str | None:
    """The job's shared router (``harness.fleet.router_service``), named by ``HARNESS_FLEET_ROUTER``
    (set by ``job_router`` for the trials it runs); None: each gateway routes alone."""
    return read_env(ROUTER_ENV)


def gateway_files(
    staging: Path,
    *,
    trial: str,
    agent: str,
    llm: LLMEntry,
    fleet_file: Path | None,
    replay: Path | None,
) -> str:
    """Write fleet.yml, keys.yml (and the cassette) into ``staging``; return the key."""
    staging.mkdir(parents=True, exist_ok=True)
    fleet: dict[str, Any] = {}
    if fleet_file is not None and not replay:
        fleet = yaml.safe_load(fleet_file.read_text(encoding="utf-8")) or {}
    cost = llm.cost
    if cost.input or cost.cached_input or cost.output:
        fleet.setdefault("prices", {})[llm.name] = {
            "input": cost.input,
            "cached_input": cost.cached_input,
            "output": cost.output,
        }
    (staging / "fleet.yml").write_text(yaml.safe_dump(fleet, sort_keys=False))
    key = f"hk-{secrets.token_hex(16)}"
    keys = {key: {"trial": trial, "agent": agent, "model": llm.name}}
    (staging / "keys.yml").write_text(yaml.safe_dump(keys))
    if replay is not None:  # keep the suffix: .json and .jsonl cassettes parse differently
        shutil.copy2(replay, staging / cassette_name(replay))
    return key


def cassette_name(replay: Path) -> str:
    """The cassette's file name in the gateway's folder (its suffix kept)."""
    return f"cassette{replay.suffix or '.jsonl'}"
