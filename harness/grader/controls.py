"""Grader controls, with their I/O: HIGH, LOW, ISOLATION, CRITICAL, DETERMINISM.

The reference tree is set up once (solution applied); each defect is applied to a copy
of it; every tree goes through the same verification path as a real trial (host or
scorer container), one executed-app scoring at a time per machine. LOW is the
reference with the scenario's ``low.patch`` (a build that boots but does the core job
wrong; required when the scenario has its own suite) or, for test-based scenarios, the
do-nothing tree. DETERMINISM scores the reference and the LOW tree twice each. The
verdict arithmetic is pure and lives in ``harness.scoring``; ``controls.json`` keeps
every tree's final score.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from harness.agents.builtin import OracleAgent, reference_solution
from harness.appkit.slot import POLICY
from harness.backends import VerifySpec, get_backend
from harness.config.settings import Settings
from harness.errors import InfraError, UserError
from harness.grader import memo
from harness.grader.calibration_ledger import LEDGER, Entry, Ledger, rebuilt
from harness.grader.record import ControlsRecord
from harness.grader.scoring_progress import Progress, ids
from harness.results import now_iso
from harness.scenario.model import LoadedScenario
from harness.scoring import ControlsReport, DefectOutcome, Score, evaluate_controls
from harness.scoring.era import code_fingerprint
from harness.scoring.scorer import Scorer
from harness.scoring.verdicts import NOT_TRUSTED, TRUSTED, ControlResult
from harness.trial.slot_log import take_slot
from harness.trial.workspace import read_state, setup
from harness.util.fs import copytree
from harness.util.git import apply_patch
from harness.verify import proof as proof_env
from harness.verify.proof import (  # re-exported: their home before verify.proof
    CONTROLS_FILE,
    TEST_SUITE_THRESHOLDS,
    grader_verdict,
    thresholds_for,
)
from harness.verify.request import make_request
from harness.verify.scoring_bridge import load_suite_module

Verifier = Callable[[Path, Any], Any]


LOW_PATCH = "low.patch"


@dataclasses.dataclass(frozen=True)
class Defect:
    name: str
    patch: Path
    breaks: list[str]
    harm: str
    critical: bool = False
    violates: tuple[str, ...] = ()
    may_break: tuple[str, ...] = ()  # racy side effects: neither required nor a cascade


def load_defects(loaded: LoadedScenario) -> list[Defect]:
    """``defects/<name>.patch`` with ``defects/<name>.yml`` (``breaks``, ``harm``, and
    optionally ``critical``, ``violates``: the SPEC MUST ids it violates, and
    ``may_break``: checks a racy mistake breaks on some runs and not on others)."""
    folder = loaded.directory / "defects"
    defects = []
    for patch in sorted(folder.glob("*.patch")) if folder.is_dir() else []:
        meta_file = patch.with_suffix(".yml")
        if not meta_file.is_file():
            raise UserError(
                "defect has no .yml",
                file=patch,
                field="breaks",
                fix=f"add {meta_file.name} with breaks: [check names] and harm:",
            )
        meta = yaml.safe_load(meta_file.read_text()) or {}
        breaks = meta.get("breaks")
        if not isinstance(breaks, list) or not breaks:
            raise UserError(
                "defect declares no broken checks",
                file=meta_file,
                field="breaks",
                fix="list the checks this defect must break",
            )
        violates = meta.get("violates", [])
        if not isinstance(violates, list):
            raise UserError(
                "defect violates is not a list",
                file=meta_file,
                field="violates",
                fix="list the SPEC MUST ids it violates, e.g. [M-SYNC-3]",
            )
        may_break = meta.get("may_break", [])
        if not isinstance(may_break, list) or set(map(str, may_break)) & set(map(str, breaks)):
            raise UserError(
                "defect may_break is not a list of checks apart from breaks",
                file=meta_file,
                field="may_break",
                fix="list only the checks the mistake breaks on some runs and not on others",
            )
        defects.append(
            Defect(
                patch.stem,
                patch,
                [str(b) for b in breaks],
                str(meta.get("harm", "")),
                bool(meta.get("critical", False)),
                tuple(str(v) for v in violates),
                tuple(str(m) for m in may_break),
            )
        )
    return defects


class ControlRunner:
    """Scores trees for one scenario; keeps every workspace under one temp folder."""

    def __init__(
        self,
        loaded: LoadedScenario,
        settings: Settings,
        sandbox: str,
        reuse: bool = False,
        ledger: tuple[Ledger, Scorer] | None = None,
        progress: Callable[[str], None] | None = None,
    ) -> None:
        self.loaded = loaded
        self.progress = progress  # one line per scoring (``steps`` counts them)
        self.steps: Progress | None = None
        self.reuse = reuse  # read kept scorings (``grader.memo``); every scoring is kept
        self.ledger = ledger  # with reuse: a first scoring may come from a ledger line
        self.reused: list[str] = []
        self.settings = settings
        self.sandbox = sandbox
        self.backend = get_backend(sandbox)
        self.tmp = Path(tempfile.mkdtemp(prefix="harness-controls-"))
        self.image: str | None = None  # the scorer image the proof was made in
        self.last: Any = None  # the latest VerifyOutcome

    def close(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)

    def fresh(self, tag: str) -> Path:
        settings = dataclasses.replace(self.settings, workspace=self.tmp / tag)
        return setup(self.loaded, settings)

    def score(self, ws: Path, seed: str, tag: str = "") -> Score:
        started, kept = time.monotonic(), len(self.reused)
        score = self._score(ws, seed, tag)
        if self.steps is not None:
            name = self._name(ws) + (f" ({tag})" if tag else "")
            text = f"seed {seed} {name}: final {score.final:.4f}"
            if score.spec_met is not None:
                text += " SPEC met" if score.spec_met else f" unmet {ids(score.unmet)}"
            fresh = len(self.reused) == kept
            self.steps.step(text, time.monotonic() - started, scored=fresh)
        return score

    def _name(self, ws: Path) -> str:
        name = ws.relative_to(self.tmp).parts[0] if ws.is_relative_to(self.tmp) else ws.name
        return "defects/" + ws.name if name == "defects" else name

    def _score(self, ws: Path, seed: str, tag: str) -> Score:
        state = read_state(ws, self.loaded)
        folder = self.settings.results / self.loaded.name
        memo_key = memo.key(self.loaded.directory, ws, state.baseline, self.sandbox, seed, tag)
        kept = memo.read(folder, memo_key) if self.reuse else None
        if kept is None and self.reuse and self.ledger is not None and not tag:
            ledger, scorer = self.ledger  # a repeat (``tag``) is always scored for real
            entry = ledger.find(seed, self.sandbox, memo.tree_digest(ws))
            kept = rebuilt(entry, scorer) if entry is not None else None
            tag = "ledger" if kept is not None else tag
        if kept is not None:
            name = self._name(ws)
            self.reused.append(f"{name}:{tag}" if tag else name)
            return kept
        request = make_request(self.loaded, ws, state.baseline, seed, settings=self.settings)
        spec = VerifySpec(self.loaded, ws, request, labels={"harness.phase": "control"})
        with take_slot(request.suite_dir is not None):
            outcome, self.image = self.backend.verify(spec)
        self.last = outcome
        if outcome.error or outcome.score is None:  # unmeasurable: the controls cannot judge
            raise InfraError(f"control scoring failed: {outcome.error or 'no score'}")
        score = Score.model_validate(outcome.score)
        memo.keep(folder, memo_key, score)
        self._record(ws, seed, tag, score)
        return score

    def _record(self, ws: Path, seed: str, tag: str, score: Score) -> None:
        """With ``reuse``, a first scoring also becomes a line of an existing ledger: a kept
        scoring's key holds the harness's code and the thresholds, so it is lost to the
        next commit (or a calibration), while a ledger line counts for as long as the
        scorer's own code is the same, on any machine."""
        if tag or not self.reuse or self.ledger is None:
            return
        ledger, _ = self.ledger
        if not ledger.path.is_file():  # only a scenario under calibration keeps a ledger
            return
        name = self._name(ws)
        tree = "LOW" if name == "low" else name.removeprefix("defects/")
        ledger.add(Entry.of(tree, seed, self.sandbox, memo.tree_digest(ws), score))

    def patched(self, reference: Path, patch: Path, tag: str, what: str) -> Path:
        """A copy of the reference tree with ``patch`` applied."""
        tree = self.tmp / tag
        copytree(reference, tree)
        apply_patch(
            patch,
            tree,
            what,
            file=patch,
            field="(patch)",
            fix="regenerate it against the reference solution tree",
        )
        return tree


@dataclasses.dataclass
class ControlsRun:
    """Every tree's score from one controls run (what calibrate also needs)."""

    high: Score
    again: Score
    low: Score
    low_again: Score
    nop: Score
    defects: list[DefectOutcome]
    low_kind: str
    environment: dict[str, Any]


def score_trees(runner: ControlRunner, defects: list[Defect], seed: str) -> ControlsRun:
    """Score reference (twice), LOW (twice), the do-nothing tree and every defect."""
    loaded = runner.loaded
    repeats = 5 if (loaded.directory / LOW_PATCH).is_file() else 4  # LOW is nop without one
    runner.steps = Progress(repeats + len(defects), runner.progress)
    reference = runner.fresh("reference")
    OracleAgent.apply(loaded, reference)
    baseline = read_state(reference, loaded).baseline
    try:
        high = runner.score(reference, seed)
    finally:  # a reference that cannot run is an environment error, recorded as NOT PROVEN
        environment = proof_env.environment(
            loaded,
            runner.sandbox,
            reference,
            baseline,
            on_host=runner.backend.on_host,
            image=runner.image,
        )
        proof_env.refuse_errored_reference(
            runner.last,
            loaded,
            runner.sandbox,
            environment,
            runner.settings.results / loaded.name / CONTROLS_FILE,
        )
    again = runner.score(reference, seed, "again")
    nop = runner.score(runner.fresh("nop"), seed)
    low_patch = loaded.directory / LOW_PATCH
    if low_patch.is_file():
        low_tree = runner.patched(reference, low_patch, "low", "low patch (on the reference)")
        low, low_kind = runner.score(low_tree, seed), f"reference + {LOW_PATCH}"
        low_again = runner.score(low_tree, seed, "again")
    elif loaded.scenario.verify.suite:
        raise UserError(
            "a build-from-spec scenario needs a LOW tree that runs but does the job wrong",
            file=loaded.directory / LOW_PATCH,
            field="(low patch)",
            fix=f"add {LOW_PATCH}: a patch on the reference that boots but breaks the core job",
        )
    else:
        low_again = runner.score(runner.fresh("nop-again"), seed, "again")
        low, low_kind = nop, "do-nothing"
    outcomes = []
    for defect in defects:
        tree = runner.patched(
            reference, defect.patch, f"defects/{defect.name}", "defect (on the reference)"
        )
        outcomes.append(
            DefectOutcome(
                name=defect.name,
                declared=defect.breaks,
                score=runner.score(tree, seed),
                critical=defect.critical,
                violates=list(defect.violates),
                may_break=list(defect.may_break),
            )
        )
    return ControlsRun(high, again, low, low_again, nop, outcomes, low_kind, environment)


def _ledger(loaded: LoadedScenario) -> tuple[Ledger, Scorer] | None:
    """The suite's calibration ledger with a scorer to compose its lines again."""
    if not loaded.scenario.verify.suite:
        return None
    suite_dir = loaded.directory / loaded.scenario.verify.suite
    suite = load_suite_module(suite_dir).suite
    return Ledger(suite_dir / LEDGER, code_fingerprint(suite)), Scorer(suite)


def with_control(report: ControlsReport, control: ControlResult) -> ControlsReport:
    """The report with one more control (the verdict judged again)."""
    controls = [*report.controls, control]
    verdict = TRUSTED if all(c.passed for c in controls) else NOT_TRUSTED
    return report.model_copy(update={"controls": controls, "verdict": verdict})


def run_controls(
    loaded: LoadedScenario,
    settings: Settings,
    sandbox: str,
    seed: str | None = None,
    reuse: bool = False,
    progress: Callable[[str], None] | None = None,
) -> ControlsReport:
    """Score every tree (``progress``: a line per scoring) and judge the controls; the
    record is written to ``controls.json`` beside the scenario's results."""
    reference_solution(loaded, "prove the grader with controls")
    seed = seed or loaded.seed
    defects = load_defects(loaded)
    runner = ControlRunner(
        loaded, settings, sandbox, reuse=reuse, ledger=_ledger(loaded), progress=progress
    )
    try:
        run = score_trees(runner, defects, seed)
        report = evaluate_controls(
            run.high,
            run.low,
            run.defects,
            (run.high.vector(), run.again.vector()),
            thresholds_for(loaded),
            failing_determinism=(run.low.vector(), run.low_again.vector()),
        )
    finally:
        runner.close()
    mutation = None
    if loaded.scenario.verify.suite:  # an app's grader is trusted only against mutants too
        from harness.grader.mutants.ledger import current_score
        from harness.grader.mutants.score import mutation_control

        found = current_score(loaded)
        mutation = found.as_json()
        report = with_control(report, mutation_control(found))
    record = ControlsRecord.model_validate(
        {
            "scenario": loaded.name,
            "scenario_version": loaded.version,
            "scenario_sha": loaded.sha256,
            "at": now_iso(),
            "sandbox": sandbox,
            "environment": run.environment,
            "seed": seed,
            "scoring": POLICY,
            "high": run.high.final,
            "low": run.low.final,
            "low_tree": run.low_kind,
            "nop": run.nop.final,
            "defect_scores": {d.name: d.score.final for d in run.defects},
            "reused": runner.reused,
            "mutation": mutation,
            **report.model_dump(mode="json"),
        }
    )
    proof_env.write_proof(settings.results / loaded.name / CONTROLS_FILE, record.as_json())
    return report


__all__ = [
    "CONTROLS_FILE",
    "TEST_SUITE_THRESHOLDS",
    "ControlRunner",
    "Defect",
    "grader_verdict",
    "load_defects",
    "run_controls",
    "thresholds_for",
]
