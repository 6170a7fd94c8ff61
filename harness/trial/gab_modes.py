"""goagentbench's partial modes of ``run-agent`` and ``verify``.

``run-agent --only-start`` records the run (agent, model, run.json) and writes
``.run-start.json`` without running the agent, for an agent driven by hand; a later
``harness verify`` grades that run. ``verify --only-report`` grades the workspace and
prints the report without writing any results: the run folder is graded in a temporary
copy, and a workspace without a run is graded as a ``manual`` run in a temporary results
folder; the workspace keeps no trace of it.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from pathlib import Path

from harness.config.entrants import Registry
from harness.config.settings import Settings
from harness.results import RunDir, gab
from harness.scenario.model import LoadedScenario
from harness.trial import containment
from harness.trial.entrant import RunOptions, resolve_entrant
from harness.trial.result import TrialResult
from harness.trial.trial import POINTER, Trial
from harness.trial.workspace import workspace_path
from harness.trial.workspace_lock import holding


def start_only(
    loaded: LoadedScenario, settings: Settings, registry: Registry, opts: RunOptions
) -> RunDir:
    """``run-agent --only-start``: the run and ``.run-start.json``, no agent."""
    from harness.config.entrants import NO_MODEL
    from harness.results import new_run_id

    with holding(workspace_path(loaded, settings)):
        trial = Trial.open(loaded, settings, opts.sandbox)
        trial.check_fresh()
        entrant = resolve_entrant(loaded, settings, registry, opts, trial.backend)
        meta = trial._meta(
            new_run_id(entrant.name, entrant.llm.name),
            agent=entrant.name,
            agent_version=entrant.version,
            model=entrant.llm.name if entrant.llm.name != NO_MODEL else "none",
            model_id=entrant.llm.id_for(entrant.name),
            sandbox=trial.backend.name,
            sandboxes={"agent": "manual"},
        )
        record: dict[str, object] = {}
        containment.record(record, loaded.scenario.sandbox, trial.budget(opts))
        run = trial._begin_run(meta.model_copy(update=record))
        gab.write_run_start(trial.workspace, meta.as_json())
        return run


def report_only(loaded: LoadedScenario, settings: Settings, sandbox: str) -> TrialResult:
    """``verify --only-report``: grade and return the report; write no results."""
    ws = workspace_path(loaded, settings)
    with holding(ws), tempfile.TemporaryDirectory(prefix="harness-only-report-") as tmp:
        trial = Trial.open(loaded, settings, sandbox)
        pointer = ws / POINTER
        had_pointer = pointer.exists()
        saved = pointer.read_bytes() if had_pointer else b""
        try:
            if trial.run is not None:
                copy = Path(tmp) / loaded.name / trial.run.run_id
                shutil.copytree(trial.run.path, copy)
                trial.run, trial.meta = RunDir.open(copy), RunDir.open(copy).read_run()
            else:
                trial.settings = dataclasses.replace(settings, results=Path(tmp))
            result = trial.verify()
            text = (result.run_dir / "verify" / "report.txt").read_text()
            return dataclasses.replace(result, text=text)
        finally:
            if had_pointer:
                pointer.write_bytes(saved)
            else:
                pointer.unlink(missing_ok=True)
