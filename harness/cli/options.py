"""What the trial and grader commands share: their options (``--agent``, ``--sandbox``,
``--seed``...) and the checks and loads behind them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from harness.backends import check_backend
from harness.config.budget import Budget
from harness.config.entrants import Registry
from harness.config.project import require_project, require_scenarios
from harness.config.settings import Settings
from harness.errors import UserError
from harness.scenario.load import load_scenario
from harness.scenario.lock import check_lock
from harness.scenario.model import SEED, LoadedScenario
from harness.trial.entrant import RunOptions

AGENT_HELP = typer.Option("--agent", help="a name from agents.yml")
AgentOpt = Annotated[str, AGENT_HELP]

SandboxOpt = Annotated[str, typer.Option("--sandbox", help="docker (default) or local")]
ReplayOpt = Annotated[
    Path | None, typer.Option("--replay", help="a cassette the gateway serves instead of the fleet")
]
RecordOpt = Annotated[
    bool, typer.Option("--record", help="keep the gateway's request/response recording")
]
AllowFailingOpt = Annotated[
    bool,
    typer.Option(
        "--allow-failing-pairs",
        help="run an agent x model pair `harness fleet check` found to fail",
    ),
]
SeedOpt = Annotated[
    str | None,
    typer.Option("--seed", help="16 hex digits: replay a trial's seed; default: a fresh one"),
]


def current_settings() -> Settings:
    """The settings from the environment."""
    return Settings.from_env()


def load_named(name: str) -> LoadedScenario:
    """Scenario ``name`` under the scenario root."""
    return load_scenario(name, require_scenarios(current_settings()))


def load_runnable(name: str) -> LoadedScenario:
    """The scenario a new run is made of: a locked version whose folder changed since is
    refused (its results would carry a version they are not of)."""
    root = require_scenarios(current_settings())
    loaded = load_scenario(name, root)
    check_lock(loaded, root)
    return loaded


def check_sandbox(value: str) -> str:
    """``--sandbox``: a registered backend's name."""
    return check_backend(value)


def check_seed(value: str | None) -> str | None:
    """``--seed``: 16 hex digits, lower-cased (None: a fresh seed)."""
    if value is None:
        return None
    if not SEED.match(value.lower()):  # the same rule as scenario.yml's seed
        raise UserError(
            f"'{value}' is not 16 hex digits", field="--seed", fix="e.g. --seed 00c0ffee00c0ffee"
        )
    return value.lower()


def run_options(
    agent: str,
    model: str | None,
    seed: str | None,
    sandbox: str,
    replay: Path | None,
    record: bool,
    budget: Budget | None = None,
    allow_failing_pairs: bool = False,
) -> RunOptions:
    """The options of one trial, from the flags ``run-agent`` and ``exec`` share."""
    return RunOptions(
        agent=agent,
        model=model,
        seed=check_seed(seed),
        sandbox=check_sandbox(sandbox),
        replay=replay.resolve() if replay else None,
        record=record,
        budget=budget,
        allow_failing_pairs=allow_failing_pairs,
    )


def load_registry() -> Registry:
    """agents.yml and llms.yml of the project."""
    return Registry.load(require_project(current_settings()))
