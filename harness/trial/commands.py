"""The calls behind ``harness run-agent``, ``verify`` and ``exec`` (and the job worker's
trials): each holds the workspace's lock, opens or sets up its ``Trial`` and runs the phase."""

from __future__ import annotations

from harness.backends import get_backend
from harness.config.entrants import Registry
from harness.config.settings import Settings
from harness.errors import InfraError
from harness.results import RunDir
from harness.scenario.model import LoadedScenario
from harness.trial.entrant import RunOptions, resolve_entrant
from harness.trial.preflight import preflight_trial
from harness.trial.result import TrialResult
from harness.trial.trial import Trial
from harness.trial.workspace import workspace_path
from harness.trial.workspace_lock import holding
from harness.trial.writefail import FIX, write_cause
from harness.verify.scoring_bridge import check_suite_pin


def run_agent(
    loaded: LoadedScenario, settings: Settings, registry: Registry, opts: RunOptions
) -> RunDir:
    """``harness run-agent``: run the agent on a set-up workspace and record it."""
    with holding(workspace_path(loaded, settings)):
        trial = Trial.open(loaded, settings, opts.sandbox)
        trial.check_fresh()
        entrant = resolve_entrant(loaded, settings, registry, opts, trial.backend)
        return trial.run_agent(entrant, opts)


def verify(
    loaded: LoadedScenario, settings: Settings, *, sandbox: str = "docker", copy_only: bool = False
) -> TrialResult | None:
    """``harness verify``: verify the workspace's current run (or only copy hidden files)."""
    with holding(workspace_path(loaded, settings)):
        trial = Trial.open(loaded, settings, sandbox)
        if copy_only:
            trial.copy_hidden()
            return None
        return trial.verify()


def execute(
    loaded: LoadedScenario, settings: Settings, registry: Registry, opts: RunOptions
) -> TrialResult:
    """``harness exec``: setup + run-agent + verify as one trial, carried in memory."""
    backend = get_backend(opts.sandbox)
    check_suite_pin(loaded)
    preflight_trial(loaded, registry, opts, backend, settings)  # before anything is written
    entrant = resolve_entrant(loaded, settings, registry, opts, backend)
    with holding(workspace_path(loaded, settings)):
        try:
            trial = Trial.setup(loaded, settings, opts.sandbox, opts.seed)
        except OSError as exc:  # the workspace's disk: before any run folder exists
            raise InfraError(write_cause(exc), field="(workspace)", fix=FIX) from exc
        return trial.execute(entrant, opts)
