"""``harness check SCENARIO``: everything a reviewer asks of a new scenario version, in
one run, with a Markdown summary to paste into the review.

validate (``--deep`` when this harness has it), the lock, the controls, and two or more
entrants (the built-in ``oracle`` and ``nop`` need no model).
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from harness.authoring.leaks import ACCEPTED, scenario_leaks
from harness.config.entrants import Registry
from harness.config.settings import Settings
from harness.errors import HarnessError
from harness.grader.controls import CONTROLS_FILE, run_controls
from harness.grader.mutants.ledger import current_score
from harness.grader.mutants.score import FLAG_BELOW
from harness.scenario.lock import check_lock
from harness.scenario.model import LoadedScenario
from harness.trial.commands import execute
from harness.trial.entrant import RunOptions
from harness.util.fs import read_json
from harness.verify.proof import short

DEFAULT_ENTRANTS = ("oracle", "nop")
EXPECTED = {"oracle": "success", "nop": "failed"}


@dataclass
class Step:
    name: str
    ok: bool
    detail: str


@dataclass
class CheckReport:
    scenario: str
    version: str
    sha: str
    steps: list[Step] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(s.ok for s in self.steps)

    def markdown(self) -> str:
        lines = [
            f"### harness check: {self.scenario} v{self.version}",
            "",
            f"scenario sha256 `{self.sha[:16]}`",
            "",
            "| step | result | detail |",
            "|---|---|---|",
        ]
        for s in self.steps:
            detail = s.detail.replace("|", "\\|").replace("\n", " ")
            lines.append(f"| {s.name} | {'ok' if s.ok else 'FAIL'} | {detail} |")
        lines += ["", f"**{'READY' if self.ok else 'NOT READY'}**"]
        return "\n".join(lines) + "\n"


def _cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=3600,
        check=False,
    )


def has_deep_validate(cwd: Path) -> bool:
    """Whether this harness's ``validate`` offers ``--deep`` (added by another change)."""
    return "--deep" in _cli(["validate", "--help"], cwd).stdout


def _validate(loaded: LoadedScenario, settings: Settings) -> Step:
    deep = has_deep_validate(settings.project_root)
    args = ["validate", *(["--deep"] if deep else []), loaded.name]
    done = _cli(args, settings.project_root)
    text = (done.stdout + done.stderr).strip().splitlines()
    name = "validate --deep" if deep else "validate (plain: this harness has no --deep)"
    return Step(name, done.returncode == 0, text[-1] if text else f"exit {done.returncode}")


def _todos(loaded: LoadedScenario) -> Step:
    """Placeholders left by ``harness new`` (they say ``TODO:``)."""
    left = []
    for path in sorted(loaded.directory.rglob("*")):
        if path.is_file() and path.suffix in {".yml", ".md", ".py", ".go", ""}:
            try:
                if "TODO:" in path.read_text(encoding="utf-8"):
                    left.append(path.relative_to(loaded.directory).as_posix())
            except (UnicodeDecodeError, OSError):
                continue
    if left:
        return Step("placeholders", False, f"TODO: left in {', '.join(left)}")
    return Step("placeholders", True, "none left")


def _leaks(loaded: LoadedScenario) -> Step:
    """The task text against the solution (``authoring.leaks``): a finding is fixed in
    the text or accepted in ``accepted-leaks.txt``."""
    scn = loaded.scenario
    found, ok = scenario_leaks(loaded.directory, scn.agent.instructions, scn.spec, scn.solution)
    if found:
        shown = "; ".join(f.line() for f in found[:4])
        keys = ", ".join(repr(f.key) for f in found)
        return Step(
            "leaks",
            False,
            f"{len(found)} finding(s): {shown} (fix the text, or accept with a line in "
            f"{ACCEPTED}: {keys})",
        )
    if not scn.solution:
        return Step("leaks", True, "no solution to compare with")
    return Step("leaks", True, f"none{f' ({len(ok)} accepted)' if ok else ''}")


def _lock(loaded: LoadedScenario, settings: Settings) -> Step:
    try:
        status = check_lock(loaded, settings.scenario_root)
    except HarnessError as exc:
        return Step("lock", False, exc.one_line())
    if status == "draft":
        return Step("lock", True, f"draft: run `harness lock {loaded.name}` once reviewed")
    return Step("lock", True, "locked, unchanged")


def _controls(loaded: LoadedScenario, settings: Settings, sandbox: str) -> Step:
    try:
        report = run_controls(loaded, settings, sandbox)
    except HarnessError as exc:
        return Step("controls", False, exc.one_line())
    parts = [f"{c.control} {'ok' if c.passed else 'FAIL'}" for c in report.controls]
    detail = f"{report.verdict}: {', '.join(parts)}"
    saved = settings.results / loaded.name / CONTROLS_FILE
    if saved.is_file():
        env = read_json(saved).get("environment") or {}
        detail += "; proven in " + ", ".join(f"{k} {short(v)}" for k, v in env.items())
    return Step("controls", report.trusted, detail)


def _entrant(loaded: LoadedScenario, settings: Settings, agent: str, sandbox: str) -> Step:
    with tempfile.TemporaryDirectory(prefix="harness-check-") as tmp:
        scratch = dataclasses.replace(settings, workspace=Path(tmp))
        try:
            registry = Registry.load(settings.project_root)
            result = execute(
                loaded,
                scratch,
                registry,
                RunOptions(agent=agent, sandbox=sandbox),
            )
        except HarnessError as exc:
            return Step(f"entrant {agent}", False, exc.one_line())
    score = result.report.get("score")
    if score is None:
        score = result.report.get("partial_score")
    want = EXPECTED.get(agent)
    ok = result.outcome == want if want else result.outcome != "error"
    shown = f"{score:.2f}" if isinstance(score, int | float) else "-"
    detail = f"{result.outcome}, score {shown}" + (f" (expected {want})" if want else "")
    return Step(f"entrant {agent}", ok, detail)


def _mutants(loaded: LoadedScenario) -> Step:
    """The near misses the grader catches, from the scenario's mutant ledger: read, not
    run (``harness mutants`` takes minutes); an app suite's bar is in its controls."""
    if not loaded.scenario.solution:
        return Step("mutants", True, "no reference solution: no mutants")
    found = current_score(loaded)
    if not found.judged:
        return Step("mutants", True, f"none scored: run `harness mutants {loaded.name}`")
    flagged = found.score is not None and found.score < FLAG_BELOW
    detail = found.line() + (f"; FLAGGED: under {FLAG_BELOW}" if flagged else "")
    return Step("mutants", True, detail)


def check(
    loaded: LoadedScenario,
    settings: Settings,
    *,
    sandbox: str = "docker",
    entrants: tuple[str, ...] = DEFAULT_ENTRANTS,
) -> CheckReport:
    report = CheckReport(loaded.name, loaded.version, loaded.sha256)
    report.steps.append(_validate(loaded, settings))
    report.steps.append(_todos(loaded))
    report.steps.append(_leaks(loaded))
    report.steps.append(_lock(loaded, settings))
    report.steps.append(_controls(loaded, settings, sandbox))
    report.steps.append(_mutants(loaded))
    for agent in entrants:
        report.steps.append(_entrant(loaded, settings, agent, sandbox))
    return report
