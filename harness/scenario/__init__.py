"""The ``scenario.yml`` format (on-disk format unchanged): the model (``model``), loading
a scenario folder (``load``), the ``sandbox:`` policy block (``policy``), Go/Python test
targets (``targets``) and the ``repo:`` field (``repo``).

``harness.scenario`` lists the public names of ``model`` and ``load``, so
``from harness.scenario import load_scenario`` works.
"""

from __future__ import annotations

from harness.scenario.load import (
    check_targets,
    folder_hash,
    list_scenarios,
    load_scenario,
    parse_scenario,
    scenario_dir,
)
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
    format_validation_error,
    json_schema,
    parse_duration,
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
