"""``harness validate --deep``: does the scenario's environment build it, before any agent?

Sets the scenario up in a throwaway workspace, prepares its toolchain and dependencies,
then *compiles* its hidden tests (``go test -run '^$'``, ``pytest --collect-only``) in
the verifier's environment: on the baseline, where a build failure of the task itself is
expected but a toolchain or dependency failure is the environment's (exit 3), and with
the reference solution applied, where every target must build (else exit 2).
"""

from __future__ import annotations

import dataclasses
import secrets
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from harness.agents.builtin import OracleAgent
from harness.backends import VerifySpec, get_backend
from harness.config.settings import Settings
from harness.errors import EXIT_BAD_INPUT, EXIT_INFRA, EXIT_SUCCESS
from harness.scenario.model import LoadedScenario
from harness.trial.workspace import read_state, setup
from harness.verify.outcome import TargetResult, VerifyOutcome
from harness.verify.request import make_request


@dataclass
class DeepReport:
    name: str
    lines: list[str] = field(default_factory=list)
    exit_code: int = EXIT_SUCCESS
    toolchain: str = "-"

    def fail(self, code: int, line: str) -> None:
        self.exit_code = max(self.exit_code, code)
        self.lines.append(line)


def _first_line(t: TargetResult) -> str:
    text = " ".join(c.output for c in t.tests if not c.passed) or (t.error or "")
    lines = [
        ln.strip()
        for ln in text.splitlines()
        if ln.strip() and not ln.startswith(("FAIL", "#", "=", "_"))
    ]
    return (lines[0] if lines else f"exit {t.exit_code}")[:160]


def _compile(
    ws: Path, loaded: LoadedScenario, sandbox: str, labels: dict[str, str]
) -> VerifyOutcome:

    state = read_state(ws, loaded)
    backend = get_backend(sandbox)
    request = make_request(loaded, ws, state.baseline, state.seed, on_host=backend.on_host)
    request = request.model_copy(update={"compile_only": True, "suite_dir": None})
    outcome, _ = backend.verify(VerifySpec(loaded, ws, request, labels))
    return outcome


def validate_deep(loaded: LoadedScenario, settings: Settings, sandbox: str) -> DeepReport:
    """Build the baseline (and the solution) with the hidden tests; no agent runs."""

    report = DeepReport(loaded.name)
    labels = {"harness.trial": f"deep-{secrets.token_hex(4)}", "harness.phase": "verify"}
    tmp = Path(tempfile.mkdtemp(prefix="harness-deep-"))
    try:
        scratch = dataclasses.replace(settings, workspace=tmp / "ws", results=tmp / "results")
        ws = setup(loaded, scratch, None)
        base = _compile(ws, loaded, sandbox, labels)
        report.toolchain = (base.toolchain or {}).get("ran") or "-"
        if base.error:
            report.fail(EXIT_INFRA, f"  environment: {base.error}")
            return report
        for t in base.targets:
            if t.all_passed:
                report.lines.append(f"  baseline  builds      {t.target}")
            elif t.env_error:
                report.fail(EXIT_INFRA, f"  baseline  ENVIRONMENT {t.target}: {t.env_error}")
            else:
                report.lines.append(
                    f"  baseline  no build    {t.target} (the task's to fix: {_first_line(t)})"
                )
        if report.exit_code or not loaded.scenario.solution:
            return report

        OracleAgent.apply(loaded, ws)
        solved = _compile(ws, loaded, sandbox, labels)
        for t in solved.targets:
            if t.all_passed:
                report.lines.append(f"  solution  builds      {t.target}")
            elif t.env_error:
                report.fail(EXIT_INFRA, f"  solution  ENVIRONMENT {t.target}: {t.env_error}")
            else:
                report.fail(
                    EXIT_BAD_INPUT,
                    f"  solution  NO BUILD    {t.target}: {_first_line(t)} "
                    "(fix: the reference solution must build with the hidden tests)",
                )
        return report
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
