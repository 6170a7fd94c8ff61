"""The files a trial's gateway reads: fleet.yml with the model's prices, a fresh key in
keys.yml, the cassette under a shell-safe name with its suffix kept."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from harness.config.entrants import Cost, LLMEntry
from harness.gateway.files import cassette_name, gateway_files

pytestmark = pytest.mark.unit


def test_fleet_prices_and_a_key_for_the_trial(tmp_path: Path) -> None:
    fleet = tmp_path / "fleet.yml"
    fleet.write_text("hosts: [{name: h1, url: 'http://h1'}]\n")
    llm = LLMEntry(name="m", model="m-id", cost=Cost(input=1.0, output=2.0))
    staging = tmp_path / "gw"
    key = gateway_files(staging, trial="t1", agent="codex", llm=llm, fleet_file=fleet, replay=None)
    written = yaml.safe_load((staging / "fleet.yml").read_text())
    assert written["hosts"] == [{"name": "h1", "url": "http://h1"}]
    assert written["prices"] == {"m": {"input": 1.0, "cached_input": 0.0, "output": 2.0}}
    keys = yaml.safe_load((staging / "keys.yml").read_text())
    assert keys == {key: {"trial": "t1", "agent": "codex", "model": "m"}}
    again = gateway_files(
        staging, trial="t1", agent="codex", llm=llm, fleet_file=fleet, replay=None
    )
    assert again != key


def test_a_replay_ignores_the_fleet_and_copies_the_cassette(tmp_path: Path) -> None:
    fleet = tmp_path / "fleet.yml"
    fleet.write_text("hosts: [{name: h1, url: 'http://h1'}]\n")
    cassette = tmp_path / "my run (1).json"
    cassette.write_text("[]")
    staging = tmp_path / "gw"
    llm = LLMEntry(name="m", model="m")
    gateway_files(staging, trial="t", agent="a", llm=llm, fleet_file=fleet, replay=cassette)
    assert yaml.safe_load((staging / "fleet.yml").read_text()) == {}  # no prices, no hosts
    assert (staging / "my_run__1_.json").read_text() == "[]"


def test_cassette_names_are_shell_safe_and_keep_their_suffix() -> None:
    assert cassette_name(Path("/x/a b;rm.jsonl")) == "a_b_rm.jsonl"
    assert cassette_name(Path("plain")) == "plain.jsonl"
