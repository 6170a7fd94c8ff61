"""A trial's verification report: ``verify/report.json``'s object and ``report.txt``.

The report is built once, by ``verify.report.build_report`` (a ``results.report.Report``),
from the outcome, the verdict, run.json and what the trial adds: the grader's proof
verdict here, containment's stop reason and policy, the scoring slot, the harness's own
error when the agent phase failed, and how workspace.diff came out.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from harness.backends import Backend
from harness.config.settings import Settings
from harness.results import Phase, RunDir, RunMeta
from harness.scenario.model import LoadedScenario
from harness.trial import containment
from harness.trial.modelnotes import model_notes
from harness.trial.workspace import WorkspaceState
from harness.verify.outcome import VerifyOutcome
from harness.verify.proof import CONTROLS_FILE, grader_verdict
from harness.verify.proof import environment as proof_environment
from harness.verify.report import build_report, diff_note, render_text


class Reported(Protocol):
    """What the report reads of a trial (``trial.Trial``)."""

    @property
    def loaded(self) -> LoadedScenario: ...

    @property
    def settings(self) -> Settings: ...

    @property
    def backend(self) -> Backend: ...

    @property
    def workspace(self) -> Path: ...

    @property
    def state(self) -> WorkspaceState: ...

    @property
    def meta(self) -> RunMeta | None: ...

    @property
    def run(self) -> RunDir | None: ...


def unproven_verdict(verdict: str, results: Path, loaded: LoadedScenario) -> str:
    """A scenario whose grader was never proven on this machine (no ``controls.json``:
    every shipped scenario on a fresh clone, whose proofs live under results/) says
    just that, with the command that proves it. The alarm ``GRADER NOT PROVEN`` stays
    for a proof that no longer holds: a changed scenario, a reference that errors."""
    if (results / loaded.name / CONTROLS_FILE).is_file():
        return verdict  # a proof (or its failure) was made here: it speaks
    return (
        f"not proven on this machine yet (`harness controls {loaded.name}` proves its grader here)"
    )


def trial_report(
    trial: Reported,
    progress: dict[str, Any] | None,
    outcome: VerifyOutcome,
    result: str,
    last: Phase | None,
    slot: dict[str, Any],
) -> tuple[dict[str, Any], str]:
    """report.json's object and report.txt's text for ``trial``'s verification;
    ``progress`` is goagentbench's run-progress record."""
    loaded, meta = trial.loaded, trial.meta
    assert meta is not None
    here = proof_environment(
        loaded,
        trial.backend.name,
        trial.workspace,
        trial.state.baseline,
        on_host=trial.backend.on_host,
        image=meta.images.get("verify"),
    )
    extra = {**containment.report_fields(meta.as_json(), last), "scoring_slot": slot}
    if last is not None and last.outcome == "error" and not outcome.error:
        extra["error"] = f"agent phase: {last.detail}"  # the harness's, named
    assert trial.run is not None
    notes = model_notes(trial.run.path, str(meta.as_json().get("model") or "the model"))
    if notes:
        extra["model_notes"] = notes  # e.g. tool calls answered in text: the pair's limit
    diff = meta.as_json().get("workspace_diff")
    if diff is not None:
        extra["workspace_diff"] = diff
    report = build_report(
        meta.as_json(),
        outcome,
        result,
        progress,
        grader=unproven_verdict(
            grader_verdict(trial.settings.results, loaded.name, loaded.sha256, here),
            trial.settings.results,
            loaded,
        ),
        extra=extra,
    ).as_json()
    return report, render_text(report, outcome.report_text) + diff_note(diff)


__all__ = ["trial_report", "unproven_verdict"]
