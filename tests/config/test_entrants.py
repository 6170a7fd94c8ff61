"""agents.yml / llms.yml loading and coherence."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.config.entrants import Registry
from harness.errors import UserError
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.unit


def write(root: Path, agents: str, llms: str) -> Path:
    (root / "agents.yml").write_text(agents)
    (root / "llms.yml").write_text(llms)
    return root


def test_shipped_files_are_coherent() -> None:
    reg = Registry.load(REPO_ROOT)
    agent, llm = reg.resolve("oracle", None)
    assert agent.version and llm.name == "none"


def test_supported_llm_must_exist(tmp_path: Path) -> None:
    write(
        tmp_path,
        "agents:\n  - {name: a, version: '1', supports-llms: [ghost]}\n",
        "llms:\n  - {name: m, model: m-1}\n",
    )
    with pytest.raises(UserError) as info:
        Registry.load(tmp_path)
    assert "ghost" in info.value.one_line() and info.value.field == "agents.a.supports-llms"


def test_agent_ids_must_name_known_agents(tmp_path: Path) -> None:
    write(
        tmp_path,
        "agents:\n  - {name: a, version: '1', supports-llms: [m]}\n",
        "llms:\n  - {name: m, model: m-1, agent-ids: {b: x}}\n",
    )
    with pytest.raises(UserError) as info:
        Registry.load(tmp_path)
    assert info.value.field == "llms.m.agent-ids"


def test_per_agent_ids_and_prices(tmp_path: Path) -> None:
    write(
        tmp_path,
        "agents:\n  - {name: a, version: '1', supports-llms: [m]}\n",
        "llms:\n  - name: m\n    model: m-1\n    reasoning-level: high\n"
        "    agent-ids: {a: openai/m-1}\n    cost: {input: 1.25, cached-input: 0.1, output: 10}\n",
    )
    reg = Registry.load(tmp_path)
    _, llm = reg.resolve("a", "m")
    assert llm.id_for("a") == "openai/m-1" and llm.cost.cached_input == 0.1


def test_unknown_key_in_registry(tmp_path: Path) -> None:
    write(tmp_path, "agents:\n  - {name: a, versoin: '1'}\n", "llms: []\n")
    with pytest.raises(UserError) as info:
        Registry.load(tmp_path)
    assert "did you mean 'version'" in info.value.one_line()


def test_duplicate_names_are_refused(tmp_path: Path) -> None:
    write(
        tmp_path,
        "agents:\n  - {name: a, version: '1'}\n  - {name: a, version: '2'}\n",
        "llms: []\n",
    )
    with pytest.raises(UserError) as info:
        Registry.load(tmp_path)
    assert "listed twice" in info.value.one_line()
