"""One trial's phases: setup, agent, verify; and their recording.

The CLI commands ``setup``, ``run-agent``, ``verify`` and ``exec`` are thin wrappers
around the functions here. User mistakes are found before a result folder exists, so a
refused run writes nothing; infrastructure failures are recorded as ``error``.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from harness import __version__
from harness.agents import AgentContext, get_agent
from harness.controls import grader_verdict
from harness.errors import HarnessError, InfraError, UserError
from harness.fsutil import read_json, write_atomic, write_json
from harness.gitutil import full_diff
from harness.registry import Registry
from harness.results import RunDir, host_info, new_run_id, now_iso
from harness.sandbox.base import SandboxSpec
from harness.scenario import LoadedScenario
from harness.settings import Settings
from harness.verify.report import build_report, render_text
from harness.verify.request import make_request
from harness.verify.results import VerifyOutcome
from harness.workspace import (
    WorkspaceState,
    read_state,
    setup,
    workspace_path,
    write_state,
)

SandboxKind = Literal["local", "docker"]
POINTER = Path(".git") / "harness" / "run.json"


@dataclass(frozen=True)
class RunOptions:
    agent: str
    model: str | None = None
    seed: str | None = None
    sandbox: SandboxKind = "docker"
    job: str | None = None
    trial_key: str | None = None  # the job's name for this trial (resume matches on it)
    repetition: int = 0


@dataclass(frozen=True)
class TrialResult:
    outcome: str
    run_dir: Path
    report: dict[str, Any]


def _labels(run_id: str, phase: str, job: str | None) -> dict[str, str]:
    return {"harness.trial": run_id, "harness.job": job or "", "harness.phase": phase}


def _check_pin(registry: Registry, agent_name: str) -> tuple[Any, str]:
    entry = registry.agent(agent_name)
    agent = get_agent(agent_name, entry.adapter)
    reported = agent.version()
    if reported != entry.version:
        raise UserError(
            f"agent '{agent_name}' reports version {reported} but is pinned to {entry.version}",
            file=registry.agents_path,
            field=f"agents.{agent_name}.version",
            fix=f"install {agent_name} {entry.version} or change the pin to {reported}",
        )
    return agent, reported


def run_agent(
    loaded: LoadedScenario, settings: Settings, registry: Registry, opts: RunOptions
) -> RunDir:
    """Run the agent on a set-up workspace and record it; returns the run folder."""
    ws = workspace_path(loaded, settings)
    state = read_state(ws, loaded)
    if (ws / POINTER).exists():
        raise UserError(
            "this workspace already has a run",
            file=ws,
            field="(workspace)",
            fix=f"run `harness setup {loaded.name}` for a fresh workspace",
        )
    entry, llm = registry.resolve(opts.agent, opts.model)
    agent, version = _check_pin(registry, opts.agent)
    if opts.agent == "oracle" and not loaded.scenario.solution:
        raise UserError(
            "the scenario has no reference solution",
            file=loaded.path,
            field="solution",
            fix="add solution: solution.patch (or a folder) to use --agent oracle",
        )
    run_id = new_run_id(entry.name, llm.name)
    run = RunDir.create(settings.results, loaded.name, run_id)
    meta = {
        "run_id": run_id,
        "scenario": loaded.name,
        "scenario_version": loaded.version,
        "scenario_sha": loaded.sha256,
        "spec_sha256": state.spec_sha256,
        "seed": state.seed,
        "commit": state.commit,
        "baseline": state.baseline,
        "agent": entry.name,
        "agent_version": version,
        "model": llm.name,
        "model_id": llm.id_for(entry.name),
        "harness_version": __version__,
        "host": host_info(),
        "started_at": now_iso(),
        "sandbox": opts.sandbox,
        "job": opts.job,
        "trial_key": opts.trial_key,
        "repetition": opts.repetition,
        "images": {},
    }
    run.write_run(meta)
    write_json(ws / POINTER, {"run_id": run_id, "path": str(run.path)})
    phase = run.begin("agent")
    spec = SandboxSpec(
        phase="agent",
        workspace=ws,
        env={"HARNESS_SEED": state.seed},
        cpus=loaded.scenario.environment.cpus,
        memory=loaded.scenario.environment.memory,
        pids=loaded.scenario.environment.pids,
        network="none",
        labels=_labels(run_id, "agent", opts.job),
    )
    from harness.sandbox.factory import make_sandbox
    from harness.trial_images import agent_image

    try:
        if opts.sandbox == "docker":
            ref = agent_image(agent, loaded)
            spec.image = ref.tag
            meta["images"]["agent"] = ref.id
            run.write_run(meta)
        sandbox = make_sandbox(opts.sandbox, spec)
        try:
            sandbox.start()
            ctx = AgentContext(
                scenario=loaded,
                workspace=ws,
                sandbox=sandbox,
                model=llm,
                seed=state.seed,
                out_dir=run.agent_dir,
                timeout_s=loaded.scenario.environment.agent_timeout,
                instructions=loaded.scenario.agent.instructions,
            )
            result = agent.run(ctx)
        finally:
            sandbox.stop()
    except UserError:
        shutil.rmtree(run.path, ignore_errors=True)
        (ws / POINTER).unlink(missing_ok=True)
        raise
    except HarnessError as exc:
        run.end(phase, "error", exc.one_line())
        write_atomic(run.path / "workspace.diff", full_diff(ws, state.baseline))
        raise
    except Exception as exc:  # a docker SDK or OS failure: infrastructure, not the agent
        run.end(phase, "error", f"{type(exc).__name__}: {exc}")
        raise InfraError(f"agent phase failed: {type(exc).__name__}: {exc}") from exc
    except BaseException:  # Ctrl-C or SIGTERM: the sandbox is already removed
        run.end(phase, "interrupted", "stopped by a signal")
        raise
    run.end(phase, result.exit, result.detail)
    write_atomic(run.path / "workspace.diff", full_diff(ws, state.baseline))
    return run


def _current_run(
    ws: Path, loaded: LoadedScenario, settings: Settings, state: WorkspaceState
) -> RunDir:
    """The run recorded in the workspace, or a new ``manual`` run for a hand-run agent."""
    pointer = ws / POINTER
    if pointer.exists():
        return RunDir.open(Path(read_json(pointer)["path"]))
    run_id = new_run_id("manual", "unknown")
    run = RunDir.create(settings.results, loaded.name, run_id)
    run.write_run(
        {
            "run_id": run_id,
            "scenario": loaded.name,
            "scenario_version": loaded.version,
            "scenario_sha": loaded.sha256,
            "spec_sha256": state.spec_sha256,
            "seed": state.seed,
            "commit": state.commit,
            "baseline": state.baseline,
            "agent": "manual",
            "agent_version": "unknown",
            "model": "unknown",
            "harness_version": __version__,
            "host": host_info(),
            "started_at": now_iso(),
            "sandbox": "local",
            "images": {},
        }
    )
    write_json(pointer, {"run_id": run_id, "path": str(run.path)})
    return run


def _agent_outcome(run: RunDir) -> str | None:
    progress = run.path / "progress.json"
    if not progress.exists():
        return None
    for phase in read_json(progress)["phases"]:
        if phase["name"] == "agent":
            return str(phase["outcome"])
    return None


def verify(
    loaded: LoadedScenario,
    settings: Settings,
    *,
    sandbox: SandboxKind = "docker",
    copy_only: bool = False,
) -> TrialResult | None:
    """Verify the workspace's current run; write verify/report.json and report.txt."""
    ws = workspace_path(loaded, settings)
    state = read_state(ws, loaded)
    request = make_request(loaded, ws, state.baseline, state.seed, copy_only=copy_only)
    if copy_only:
        from harness.verify.engine import copy_hidden

        copy_hidden(request, ws)
        write_state(ws, WorkspaceState(**{**state.__dict__, "contaminated": True}))
        return None
    run = _current_run(ws, loaded, settings, state)
    run.phases = _load_phases(run)
    meta = read_json(run.path / "run.json")
    phase = run.begin("verify")
    try:
        if sandbox == "docker":
            from harness.verify.container import verify_in_docker

            env = loaded.scenario.environment
            outcome, image_id = verify_in_docker(
                ws,
                request,
                labels=_labels(run.run_id, "verify", meta.get("job")),
                cpus=env.cpus,
                memory=env.memory,
                evidence_dest=run.verify_dir / "evidence",
            )
            meta.setdefault("images", {})["verify"] = image_id
            run.write_run(meta)
        else:
            from harness.verify.local import verify_local

            request = request.model_copy(update={"evidence_dir": str(run.verify_dir / "evidence")})
            outcome = verify_local(ws, request)
    except UserError:
        run.end(phase, "error", "refused")
        raise
    except (HarnessError, OSError, RuntimeError) as exc:
        detail = exc.one_line() if isinstance(exc, HarnessError) else f"{type(exc).__name__}: {exc}"
        outcome = VerifyOutcome(
            success=False,
            partial_score=None,
            rules=[],
            targets=[],
            changed_files=[],
            hidden_files=[],
            error=detail,
        )
    except BaseException:
        run.end(phase, "interrupted", "stopped by a signal")
        raise
    agent_outcome = _agent_outcome(run)
    if outcome.error:
        word = "error"
    elif agent_outcome == "timeout":
        word = "timeout"
    elif agent_outcome == "error":
        word = "error"
    else:
        word = "success" if outcome.success else "failed"
    report = build_report(meta, outcome, word)
    report["grader"] = grader_verdict(settings.results, loaded.name, loaded.sha256)
    write_json(run.verify_dir / "report.json", report)
    write_atomic(run.verify_dir / "report.txt", render_text(report, outcome.report_text))
    run.end(phase, "error" if outcome.error else "ok", outcome.error or "")
    return TrialResult(word, run.path, report)


def _load_phases(run: RunDir) -> list[Any]:
    from harness.results import Phase

    progress = run.path / "progress.json"
    if not progress.exists():
        return []
    phases = []
    for p in read_json(progress)["phases"]:
        ph = Phase(
            p["name"],
            p["started_at"],
            0.0,
            p["ended_at"],
            p["duration_s"],
            p["outcome"],
            p["detail"],
        )
        phases.append(ph)
    return phases


def execute(
    loaded: LoadedScenario, settings: Settings, registry: Registry, opts: RunOptions
) -> TrialResult:
    """setup + run-agent + verify, as one trial."""
    registry.resolve(opts.agent, opts.model)
    _check_pin(registry, opts.agent)
    setup(loaded, settings, opts.seed)
    try:
        run_agent(loaded, settings, registry, opts)
    except UserError:
        raise
    except HarnessError:
        pass  # recorded in progress.json; verify still writes the report as an error
    result = verify(loaded, settings, sandbox=opts.sandbox)
    if result is None:
        raise InfraError("verify produced no result")
    return result
