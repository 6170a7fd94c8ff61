"""A trial's verification report: ``verify/report.json``'s object and ``report.txt``.

The report is built once, by ``verify.report.build_report`` (a ``results.report.Report``),
from the outcome, the verdict, run.json and what the trial adds: the grader's proof
verdict here, containment's stop reason and policy, the scoring slot, the harness's own
error when the agent phase failed, and how workspace.diff came out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness.results import Phase
from harness.trial import containment
from harness.trial.modelnotes import model_notes
from harness.verify.outcome import VerifyOutcome
from harness.verify.proof import environment as proof_environment
from harness.verify.proof import grader_verdict
from harness.verify.report import build_report, diff_note, render_text

if TYPE_CHECKING:
    from harness.trial.trial import Trial


def trial_report(
    trial: Trial, outcome: VerifyOutcome, result: str, last: Phase | None, slot: dict[str, Any]
) -> tuple[dict[str, Any], str]:
    """report.json's object and report.txt's text for ``trial``'s verification."""
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
        trial._gab_progress(),
        grader=grader_verdict(trial.settings.results, loaded.name, loaded.sha256, here),
        extra=extra,
    )
    return report, render_text(report, outcome.report_text) + diff_note(diff)


__all__ = ["trial_report"]
