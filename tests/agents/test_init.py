"""An agent's adapter by name or by an agents.yml ``adapter`` (agents/__init__.py)."""

from __future__ import annotations

import pytest

from harness.agents import get_agent, load_adapter
from harness.agents.builtin import NopAgent, OracleAgent
from harness.errors import UserError

pytestmark = pytest.mark.unit


def test_a_built_in_name_gets_its_adapter() -> None:
    assert isinstance(get_agent("oracle"), OracleAgent)
    assert isinstance(get_agent("nop"), NopAgent)
    assert get_agent("oracle") is not get_agent("oracle")  # a fresh adapter each time


def test_an_adapter_spec_overrides_the_name() -> None:
    agent = get_agent("oracle", "harness.agents.builtin:NopAgent")
    assert isinstance(agent, NopAgent)
    assert isinstance(load_adapter("harness.agents.builtin:OracleAgent", "x"), OracleAgent)


@pytest.mark.parametrize(
    "spec", ["harness.agents.builtin", "no.such.module:Agent", "harness.agents.builtin:Nope"]
)
def test_an_adapter_that_cannot_load_names_the_field_to_fix(spec: str) -> None:
    with pytest.raises(UserError) as caught:
        load_adapter(spec, "mine")
    said = str(caught.value)
    assert spec in said and "agents.mine.adapter" in said and "package.module:ClassName" in said


def test_a_listed_agent_with_no_adapter_lists_the_known_ones() -> None:
    with pytest.raises(UserError) as caught:
        get_agent("no-such-agent")
    said = str(caught.value)
    assert "no adapter" in said and "agents.no-such-agent.adapter" in said
    assert "oracle" in said and "nop" in said and "aider" in said
