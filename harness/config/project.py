"""The project a command needs: the folder holding ``agents.yml``, ``llms.yml`` and
``scenarios/``, or a refusal.

The root is found from ``HARNESS_HOME`` (alias ``GOAGENTBENCH_HOME``) when set, else by
walking up from the current folder (``config/root.py``). Commands that need the project
and find none say where they looked (exit 2) instead of guessing.
"""

from __future__ import annotations

from pathlib import Path

from harness.config.root import MARKER, Lookup, find_project
from harness.config.settings import Settings, env_value
from harness.errors import UserError

FIX = "cd into a harness project (agents.yml, llms.yml, scenarios/) or set HARNESS_HOME"


def _lookup(settings: Settings) -> Lookup:
    # without a project, project_root is the folder the search started from
    return find_project(settings.project_root, env_value("HOME"))


def require_project(settings: Settings) -> Path:
    """The project root, or a UserError naming where harness looked for agents.yml."""
    if settings.project_found:
        return settings.project_root
    lookup = _lookup(settings)
    if lookup.home is not None:
        raise UserError(
            f"HARNESS_HOME has no {MARKER}",
            file=lookup.home / MARKER,
            field="HARNESS_HOME",
            fix="point HARNESS_HOME at the folder holding agents.yml, llms.yml and scenarios/",
        )
    raise UserError(
        f"no harness project here: no {MARKER} in {lookup.where()}",
        file=lookup.start,
        field="(project root)",
        fix=FIX,
    )


def require_scenarios(settings: Settings) -> Path:
    """The scenario root, or a UserError naming where harness looked for scenarios."""
    root = settings.scenario_root
    if root.is_dir():
        return root
    if env_value("SCENARIO_ROOT") is None:
        require_project(settings)  # no project and no explicit root: say where harness looked
    raise UserError(
        "scenario folder not found",
        file=root,
        field="HARNESS_SCENARIO_ROOT",
        fix="create scenarios/<family>/<name>/scenario.yml there or set HARNESS_SCENARIO_ROOT",
    )
