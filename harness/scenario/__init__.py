"""The ``scenario.yml`` format (on-disk format unchanged): the model and its loading
(``model``), the ``sandbox:`` policy block (``policy``), Go/Python test targets
(``targets``) and the ``repo:`` field (``repo``).

``harness.scenario`` re-exports the names ``harness/scenario.py`` had before the layout
move, so ``from harness.scenario import load_scenario`` keeps working.
"""

from __future__ import annotations

from typing import Any

from harness.scenario.model import (
    DURATION,
    FOLDER_VERSION,
    SCENARIO_FILE,
    SEED,
    SEMVER,
    AgentSection,
    Classification,
    CopyList,
    CopyStep,
    Duration,
    Environment,
    LoadedScenario,
    Scenario,
    Setup,
    Strict,
    StrList,
    VerifySection,
    check_targets,
    folder_hash,
    format_validation_error,
    json_schema,
    list_scenarios,
    load_scenario,
    parse_duration,
    parse_scenario,
    scenario_dir,
)

__all__ = [
    "DURATION",
    "FOLDER_VERSION",
    "SCENARIO_FILE",
    "SEED",
    "SEMVER",
    "AgentSection",
    "Classification",
    "CopyList",
    "CopyStep",
    "Duration",
    "Environment",
    "LoadedScenario",
    "Scenario",
    "Setup",
    "StrList",
    "Strict",
    "VerifySection",
    "check_targets",
    "folder_hash",
    "format_validation_error",
    "json_schema",
    "list_scenarios",
    "load_scenario",
    "parse_duration",
    "parse_scenario",
    "scenario_dir",
]


def __getattr__(name: str) -> Any:
    """Any other name the old module had (imported helpers, private names)."""
    from harness.scenario import model

    try:
        return getattr(model, name)
    except AttributeError:
        raise AttributeError(f"module 'harness.scenario' has no attribute {name!r}") from None
