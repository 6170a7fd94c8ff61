"""Agents and a CLI entry point used only by the job tests.

``SlowNop`` changes nothing, slowly enough for a test to kill a job midway.
``FlakyNop`` fails with an infrastructure error on its first attempt per scenario, to
exercise retries. ``EchoArgs`` prints the environment and arguments it was given.
``python -m tests.support.jobs_agents run ...`` runs ``harness run`` before the lead
wires it into the main app.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import typer

from harness.agents.base import AgentContext, AgentResult
from harness.errors import InfraError

VERSION = "1.0"


class SlowNop:
    """Sleeps ``HARNESS_TEST_SLOW_S`` seconds (default 3) in the sandbox, then stops."""

    name = "slownop"

    def version(self) -> str:
        return VERSION

    def image(self, toolchain: str) -> str | None:
        return None

    def run(self, ctx: AgentContext) -> AgentResult:
        seconds = os.environ.get("HARNESS_TEST_SLOW_S", "3")
        (ctx.out_dir / "transcript.txt").write_text(f"slownop: sleeping {seconds}s\n")
        ctx.sandbox.exec(["sleep", seconds], timeout=ctx.timeout_s)
        return AgentResult(exit="completed", detail="changed nothing, slowly")


class FlakyNop:
    """Raises an InfraError the first time it runs a scenario (a marker file per
    scenario in ``HARNESS_TEST_FLAKY_DIR``), then behaves like nop."""

    name = "flakynop"

    def version(self) -> str:
        return VERSION

    def image(self, toolchain: str) -> str | None:
        return None

    def run(self, ctx: AgentContext) -> AgentResult:
        marker = Path(os.environ["HARNESS_TEST_FLAKY_DIR"]) / ctx.scenario.name.replace("/", "_")
        if not marker.exists():
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.write_text("failed once\n")
            raise InfraError("simulated docker failure")
        return AgentResult(exit="completed", detail="changed nothing")


class BrokenNop:
    """Raises an InfraError while the file ``HARNESS_TEST_BROKEN`` names exists (the
    machine's fault, until the user fixes it by removing the file); with the file holding
    ``dns``, the error is a host name that does not resolve. Then behaves like nop."""

    name = "brokennop"

    def version(self) -> str:
        return VERSION

    def image(self, toolchain: str) -> str | None:
        return None

    def run(self, ctx: AgentContext) -> AgentResult:
        broken = Path(os.environ["HARNESS_TEST_BROKEN"])
        if broken.exists():
            if broken.read_text().strip() == "dns":
                raise InfraError("cannot fetch: Could not resolve host: models.invalid")
            raise InfraError("simulated docker failure (until fixed)")
        return AgentResult(exit="completed", detail="changed nothing")


class EchoArgs:
    """Runs a CLI through ``run_invocation`` (as real adapters do) that prints
    ``$GREETING`` and its arguments: ``--agent-env`` and ``--agent-arg`` reach it."""

    name = "echoargs"

    def version(self) -> str:
        return VERSION

    def image(self, toolchain: str) -> str | None:
        return None

    def run(self, ctx: AgentContext) -> AgentResult:
        from harness.agents.common import Invocation, run_invocation

        script = 'echo "env=${GREETING:-unset} args=$*"'
        return run_invocation(ctx, Invocation(argv=["sh", "-c", script, "echo"], env={}))


def main() -> None:
    """A stand-in for the main app with only ``run`` registered."""
    from harness.cli.job import run_command

    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    app.command("run")(run_command)
    app.command("exec-all")(run_command)

    def _terminate(signum: int, _frame: object) -> None:
        raise SystemExit(143)

    signal.signal(signal.SIGTERM, _terminate)
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()


def write_result(
    results: Path,
    scenario: str,
    run_id: str,
    *,
    agent: str,
    model: str = "none",
    era: str = "tests@1.0.0",
    outcome: str = "success",
    score: float | None = 1.0,
    usage: dict[str, object] | None = None,
    rows: list[dict[str, object]] | None = None,
    screenshot: bytes | None = None,
    wall_s: float = 2.0,
) -> Path:
    """A synthetic result folder with the files and fields the report and board read."""
    import json

    run = results / scenario / run_id
    (run / "verify").mkdir(parents=True)
    meta = {
        "run_id": run_id,
        "scenario": scenario,
        "scenario_version": "1.0.0",
        "scenario_sha": f"sha-{scenario}",
        "seed": "00000000000a11ce",
        "agent": agent,
        "agent_version": "1.0",
        "model": model,
        "started_at": f"2030-01-01T00:00:{run_id[-2:]}",
    }
    (run / "run.json").write_text(json.dumps(meta))
    phases = [
        {"name": "agent", "duration_s": wall_s / 2, "outcome": "completed", "detail": ""},
        {"name": "verify", "duration_s": wall_s / 2, "outcome": "ok", "detail": ""},
    ]
    (run / "progress.json").write_text(json.dumps({"phases": phases, "usage": usage or {}}))
    evidence = []
    if screenshot is not None:
        (run / "verify" / "evidence").mkdir()
        (run / "verify" / "evidence" / "page.png").write_bytes(screenshot)
        evidence = [str(run / "verify" / "evidence" / "page.png")]
    rows = rows or [
        {
            "check": "app.health",
            "tier": "core",
            "harm": "dead flow <b>",
            "score": score or 0.0,
            "status": "ok",
            "detail": "GET /health",
            "evidence": evidence,
            "critical": True,
            "severity": "dead",
        },
        {
            "check": "ui.rows_visible",
            "tier": "ui",
            "harm": "hidden rows",
            "score": score or 0.0,
            "status": "ok",
            "detail": "rows shown",
            "evidence": evidence,
            "critical": False,
            "severity": None,
        },
    ]
    scoring = {
        "suite": era.split("@")[0],
        "era": era,
        "tier_weights": {"core": 1.0},
        "tier_means": {"core": score},
        "excellence_weight": 0.0,
        "inner": score,
        "gate": 1.0,
        "excellence": 1.0,
        "base": score,
        "factors": [
            {
                "check": "app.health",
                "severity": "dead",
                "score": score,
                "floor": 0.0,
                "factor": score,
                "covers": [],
            }
        ],
        "final": score,
        "blocks": [],
        "unavailable": [],
        "rows": rows,
    }
    report = {
        "run_id": run_id,
        "scenario": scenario,
        "agent": agent,
        "agent_version": "1.0",
        "model": model,
        "success": outcome == "success",
        "outcome": outcome,
        "partial_score": score,
        "score": None if outcome == "error" else score,
        "era": None if outcome == "error" else era,
        "scoring": None if outcome == "error" else scoring,
        "error": "docker died" if outcome == "error" else None,
    }
    (run / "verify" / "report.json").write_text(json.dumps(report))
    (run / "workspace.diff").write_text("diff --git a/x b/x\n+<script>alert(1)</script>\n")
    return run
