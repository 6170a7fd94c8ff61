"""Which image each phase runs in (content-addressed tags from harness.images)."""

from __future__ import annotations

from typing import Any

from harness.scenario import LoadedScenario


def agent_image(agent: Any, loaded: LoadedScenario) -> Any:
    """The agent's own image, or the scenario's environment image for built-ins."""
    from harness.images import ensure_image

    toolchain = loaded.scenario.toolchain()
    name = agent.image(toolchain) or f"env-{toolchain}"
    return ensure_image(name)
