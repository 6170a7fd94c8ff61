"""Grader controls, with their I/O: HIGH, LOW, ISOLATION, DETERMINISM for one scenario.

The reference tree is set up once (solution applied); each defect is applied to a copy
of it; every tree goes through the same verification path as a real trial (host or
scorer container). The verdict arithmetic is pure and lives in ``harness.scoring``.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from harness import proof_env
from harness.errors import InfraError, UserError
from harness.fsutil import copytree, read_json, write_json
from harness.gitutil import apply_patch
from harness.results import now_iso
from harness.scenario import LoadedScenario
from harness.scoring import ControlsReport, DefectOutcome, Score, Thresholds, evaluate_controls
from harness.scoring.era import load_thresholds
from harness.settings import Settings
from harness.verify.request import make_request
from harness.workspace import read_state, setup

TEST_SUITE_THRESHOLDS = Thresholds(calibrated=False, high=0.99, low=0.2)
CONTROLS_FILE = "controls.json"

Verifier = Callable[[Path, Any], Any]


@dataclasses.dataclass(frozen=True)
class Defect:
    name: str
    patch: Path
    breaks: list[str]
    harm: str


def load_defects(loaded: LoadedScenario) -> list[Defect]:
    """``defects/<name>.patch`` with ``defects/<name>.yml`` (``breaks``, ``harm``)."""
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
        defects.append(
            Defect(patch.stem, patch, [str(b) for b in breaks], str(meta.get("harm", "")))
        )
    return defects


def thresholds_for(loaded: LoadedScenario) -> Thresholds:
    suite = loaded.scenario.verify.suite
    if suite and (loaded.directory / suite / "thresholds.yml").is_file():
        return load_thresholds(loaded.directory / suite / "thresholds.yml")
    return TEST_SUITE_THRESHOLDS


def _apply_solution(loaded: LoadedScenario, ws: Path) -> None:
    from harness.agents.builtin import OracleAgent

    OracleAgent.apply(loaded, ws)


class ControlRunner:
    """Scores trees for one scenario; keeps every workspace under one temp folder."""

    def __init__(self, loaded: LoadedScenario, settings: Settings, sandbox: str) -> None:
        self.loaded = loaded
        self.settings = settings
        self.sandbox = sandbox
        self.tmp = Path(tempfile.mkdtemp(prefix="harness-controls-"))
        self.image: str | None = None  # the scorer image the proof was made in
        self.last: Any = None  # the latest VerifyOutcome

    def close(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)

    def fresh(self, tag: str) -> Path:
        settings = dataclasses.replace(self.settings, workspace=self.tmp / tag)
        return setup(self.loaded, settings)

    def score(self, ws: Path) -> Score:
        state = read_state(ws, self.loaded)
        request = make_request(self.loaded, ws, state.baseline, state.seed)
        if self.sandbox == "docker":
            from harness.verify.container import verify_in_docker

            env = self.loaded.scenario.environment
            outcome, self.image = verify_in_docker(
                ws, request, labels={"harness.phase": "control"}, cpus=env.cpus, memory=env.memory
            )
        else:
            from harness.verify.local import verify_local

            outcome = verify_local(ws, request)
        self.last = outcome
        if outcome.error or outcome.score is None:
            raise InfraError(f"control scoring failed: {outcome.error or 'no score'}")
        return Score.model_validate(outcome.score)


def run_controls(loaded: LoadedScenario, settings: Settings, sandbox: str) -> ControlsReport:
    if not loaded.scenario.solution:
        raise UserError(
            "controls need a reference solution",
            file=loaded.path,
            field="solution",
            fix="add solution: solution.patch (or a folder)",
        )
    defects = load_defects(loaded)
    runner = ControlRunner(loaded, settings, sandbox)
    try:
        reference = runner.fresh("reference")
        _apply_solution(loaded, reference)
        baseline = read_state(reference, loaded).baseline
        try:
            high = runner.score(reference)
        finally:
            environment = proof_env.environment(
                loaded, sandbox, reference, baseline, image=runner.image
            )
            proof_env.refuse_errored_reference(
                runner.last,
                loaded,
                sandbox,
                environment,
                settings.results / loaded.name / CONTROLS_FILE,
            )
        again = runner.score(reference)
        low = runner.score(runner.fresh("nop"))
        isolation = []
        for defect in defects:
            tree = runner.tmp / "defects" / defect.name
            copytree(reference, tree)
            apply_patch(
                defect.patch,
                tree,
                "defect (on the reference)",
                file=defect.patch,
                field="(patch)",
                fix="regenerate it against the reference solution tree",
            )
            isolation.append(
                DefectOutcome(name=defect.name, declared=defect.breaks, score=runner.score(tree))
            )
        report = evaluate_controls(
            high, low, isolation, (high.vector(), again.vector()), thresholds_for(loaded)
        )
    finally:
        runner.close()
    record = {
        "scenario": loaded.name,
        "scenario_version": loaded.version,
        "scenario_sha": loaded.sha256,
        "at": now_iso(),
        "sandbox": sandbox,
        "environment": environment,
        "high": high.final,
        "low": low.final,
        **report.model_dump(mode="json"),
    }
    write_json(settings.results / loaded.name / CONTROLS_FILE, record)
    return report


def grader_verdict(
    results: Path,
    loaded_name: str,
    scenario_sha: str | None,
    environment: dict[str, Any] | None = None,
) -> str:
    """The verdict of the latest controls for this exact scenario content (and, when
    ``environment`` is given, for the environment the tree was verified in)."""
    path = results / loaded_name / CONTROLS_FILE
    if not path.is_file():
        return "GRADER NOT PROVEN (run `harness controls`)"
    data = read_json(path)
    if data.get("scenario_sha") != scenario_sha:
        return "GRADER NOT PROVEN (scenario changed since `harness controls`)"
    elsewhere = proof_env.verdict_here(data, environment)
    if elsewhere is not None:
        return elsewhere
    return str(data.get("verdict"))
