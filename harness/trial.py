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
from harness.registry import NO_MODEL, LLMEntry, Registry
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
    replay: Path | None = None  # a cassette the gateway serves instead of the fleet
    record: bool = False  # keep the gateway's request/response recording in the run
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


@dataclass(frozen=True)
class Entrant:
    """The agent + model of a trial, resolved and checked once: the adapter, its pinned
    and self-reported version, the model, and the fleet file its calls route through."""

    agent: Any
    name: str
    version: str
    llm: LLMEntry
    fleet_file: Path | None


def resolve_entrant(
    loaded: LoadedScenario, settings: Settings, registry: Registry, opts: RunOptions
) -> Entrant:
    """Every check on the entrant that can refuse a run, before anything is written."""
    entry, llm = registry.resolve(opts.agent, opts.model)
    agent, version = _check_pin(registry, opts.agent)
    if opts.agent == "oracle" and not loaded.scenario.solution:
        raise UserError(
            "the scenario has no reference solution",
            file=loaded.path,
            field="solution",
            fix="add solution: solution.patch (or a folder) to use --agent oracle",
        )
    return Entrant(agent, entry.name, version, llm, _model_access(llm, opts, settings))


def run_agent(
    loaded: LoadedScenario,
    settings: Settings,
    registry: Registry,
    opts: RunOptions,
    entrant: Entrant | None = None,
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
    entrant = entrant or resolve_entrant(loaded, settings, registry, opts)
    run_id = new_run_id(entrant.name, entrant.llm.name)
    run = RunDir.create(settings.results, loaded.name, run_id)
    meta = run_meta(
        loaded,
        state,
        run_id,
        agent=entrant.name,
        agent_version=entrant.version,
        model=entrant.llm.name,
        model_id=entrant.llm.id_for(entrant.name),
        sandbox=opts.sandbox,
        sandboxes={"agent": opts.sandbox},
        job=opts.job,
        trial_key=opts.trial_key,
        repetition=opts.repetition,
    )
    if entrant.fleet_file is not None:
        meta["fleet"] = _fleet_fingerprint(entrant.fleet_file)
    run.write_run(meta)
    write_json(ws / POINTER, {"run_id": run_id, "path": str(run.path)})
    _agent_phase(
        run, meta, loaded, ws, state, entrant, opts, loaded.scenario.agent.instructions, turn=1
    )
    return run


def _agent_phase(
    run: RunDir,
    meta: dict[str, Any],
    loaded: LoadedScenario,
    ws: Path,
    state: WorkspaceState,
    entrant: Entrant,
    opts: RunOptions,
    instructions: str,
    *,
    turn: int,
) -> None:
    """One agent turn in a fresh sandbox (and gateway); recorded as a phase of the run."""
    run_id = run.run_id
    agent, llm = entrant.agent, entrant.llm
    phase = run.begin("agent")
    spec = SandboxSpec(
        phase="agent",
        workspace=ws,
        env={"HARNESS_SEED": state.seed},
        cpus=loaded.scenario.environment.cpus,
        memory=loaded.scenario.environment.memory,
        pids=loaded.scenario.environment.pids,
        network="none" if llm.name == NO_MODEL else "internal",
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
        gateway: Any = None
        try:
            sandbox.start()
            if llm.name != NO_MODEL:
                gateway = _start_gateway(
                    opts, sandbox, run_id, entrant.name, llm, entrant.fleet_file
                )
                meta["images"]["gateway"] = getattr(gateway, "image_id", None)
                run.write_run(meta)
            out_dir = run.agent_dir if turn == 1 else run.agent_dir / f"turn-{turn}"
            out_dir.mkdir(parents=True, exist_ok=True)
            ctx = AgentContext(
                scenario=loaded,
                workspace=ws,
                sandbox=sandbox,
                model=llm,
                seed=state.seed,
                out_dir=out_dir,
                timeout_s=loaded.scenario.environment.agent_timeout,
                instructions=instructions,
                gateway_url=gateway.url if gateway else None,
                api_key=gateway.key if gateway else None,
            )
            result = agent.run(ctx)
            if gateway is not None:
                dest = run.path / "gateway" if turn == 1 else run.path / "gateway" / f"turn-{turn}"
                run.usage = merge_usage(
                    run.usage, _usage(gateway, dest, result.self_reported_usage)
                )
        finally:
            if gateway is not None:
                gateway.stop()
            sandbox.stop()
    except UserError:
        if turn == 1:
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
    run.end(phase, result.exit, result.detail + (f" (turn {turn})" if turn > 1 else ""))
    write_atomic(run.path / "workspace.diff", full_diff(ws, state.baseline))


def merge_usage(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """Add one turn's usage to the run's: numbers add up, host counts merge."""
    out = dict(old)
    for key, value in new.items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            if isinstance(value, dict) and isinstance(out.get(key), dict) and key == "hosts":
                merged = dict(out[key])
                for host, n in value.items():
                    merged[host] = merged.get(host, 0) + n
                out[key] = merged
            else:
                out[key] = value
        else:
            out[key] = out.get(key, 0) + value
    return out


def _model_access(llm: Any, opts: RunOptions, settings: Settings) -> Path | None:
    """The fleet file a model-using trial will route through (checked before any write)."""
    if llm.name == NO_MODEL:
        return None
    if opts.replay is not None:
        if not opts.replay.is_file():
            raise UserError(
                "cassette not found",
                file=opts.replay,
                field="--replay",
                fix="give the path of a recorded cassette (JSONL)",
            )
        return None
    fleet = settings.fleet_file
    if not fleet.is_file():
        raise UserError(
            f"model '{llm.name}' needs the fleet, and there is no fleet file",
            file=fleet,
            field="hosts",
            fix="copy fleet.yml.example to fleet.yml, or pass --replay CASSETTE",
        )
    return fleet


def _fleet_fingerprint(fleet_file: Path) -> dict[str, Any]:
    """Each host's artefact for the models (quantization, format, context), for run.json."""
    from harness.fleet import fleet_fingerprint, load_fleet

    try:
        return fleet_fingerprint(load_fleet(fleet_file))
    except UserError:
        raise
    except Exception as exc:  # a probe failure is recorded, the gateway will judge hosts
        return {"error": f"{type(exc).__name__}: {exc}"}


def _start_gateway(
    opts: RunOptions, sandbox: Any, run_id: str, agent: str, llm: Any, fleet_file: Path | None
) -> Any:
    """The trial's gateway: a container on the agent's network, or a thread for local."""
    if opts.sandbox == "docker":
        from harness.fleet.container import TrialGateway

        gw = TrialGateway(
            trial=run_id,
            agent=agent,
            llm=llm,
            network=sandbox.network_name,
            labels=dict(sandbox.spec.labels, **{"harness.phase": "gateway"}),
            fleet_file=fleet_file,
            replay=opts.replay,
            record=opts.record,
            budget=getattr(opts, "budget", None),  # a harness.budget.Budget (harden's field)
        )
        try:
            gw.start()
        except BaseException:
            gw.stop()
            raise
        return gw
    from harness.fleet.local import LocalGateway

    gw_local = LocalGateway(
        trial=run_id,
        agent=agent,
        llm=llm,
        fleet_file=fleet_file,
        replay=opts.replay,
        record=opts.record,
        budget=getattr(opts, "budget", None),
    )
    gw_local.start()
    return gw_local


def _usage(gateway: Any, dest: Path, self_reported: dict[str, Any]) -> dict[str, Any]:
    """Tokens, calls, time and cost from the gateway's own record; the agent's claim beside."""
    usage = dict(gateway.collect(dest))
    if self_reported:
        usage["self_reported"] = self_reported
        measured = usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)
        claimed = self_reported.get("total_tokens")
        if claimed is not None and measured and abs(claimed - measured) > 0.05 * measured:
            usage["self_report_disagrees"] = True
    return usage


def run_meta(
    loaded: LoadedScenario, state: WorkspaceState, run_id: str, **fields: Any
) -> dict[str, Any]:
    """run.json: who ran what, on which content, where and when."""
    return {
        "run_id": run_id,
        "scenario": loaded.name,
        "scenario_version": loaded.version,
        "scenario_sha": loaded.sha256,
        "spec_sha256": state.spec_sha256,
        "seed": state.seed,
        "commit": state.commit,
        "baseline": state.baseline,
        "harness_version": __version__,
        "host": host_info(),
        "started_at": now_iso(),
        "sandbox": None,  # the agent phase's; `sandboxes` holds each phase's
        "sandboxes": {},
        "images": {},
        **fields,
    }


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
        run_meta(loaded, state, run_id, agent="manual", agent_version="unknown", model="unknown")
    )
    write_json(pointer, {"run_id": run_id, "path": str(run.path)})
    return run


def _agent_outcome(run: RunDir) -> str | None:
    """How the last agent turn ended, or None when no agent ran (a manual run)."""
    agent_phases = [p for p in run.phases if p.name == "agent"]
    return agent_phases[-1].outcome if agent_phases else None


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
    meta = read_json(run.path / "run.json")
    meta.setdefault("sandboxes", {})["verify"] = sandbox
    run.write_run(meta)
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


def execute(
    loaded: LoadedScenario, settings: Settings, registry: Registry, opts: RunOptions
) -> TrialResult:
    """setup + run-agent + verify, as one trial (plus continue turns where allowed)."""
    entrant = resolve_entrant(loaded, settings, registry, opts)
    setup(loaded, settings, opts.seed)
    try:
        run_agent(loaded, settings, registry, opts, entrant)
    except UserError:
        raise
    except HarnessError:
        pass  # recorded in progress.json; verify still writes the report as an error
    result = verify(loaded, settings, sandbox=opts.sandbox)
    if result is None:
        raise InfraError("verify produced no result")
    turn = 1
    while (
        loaded.scenario.agent.allow_multiple_turns_on_failed_verify
        and result.outcome == "failed"
        and turn <= MAX_CONTINUES
    ):
        turn += 1
        try:
            continue_agent(loaded, settings, entrant, opts, result, turn)
        except UserError:
            raise
        except HarnessError:
            pass  # recorded as the turn's error; the final verify says so
        result = verify(loaded, settings, sandbox=opts.sandbox) or result
    return result


MAX_CONTINUES = 3
CONTINUE_PROMPT = "Please continue until the problem is solved."


def continue_agent(
    loaded: LoadedScenario,
    settings: Settings,
    entrant: Entrant,
    opts: RunOptions,
    previous: TrialResult,
    turn: int,
) -> None:
    """Another agent turn on the same workspace, told what verification said (as
    goagentbench's allow-multiple-turns-on-failed-verify does)."""
    ws = workspace_path(loaded, settings)
    state = read_state(ws, loaded)
    run = RunDir.open(previous.run_dir)
    meta = read_json(run.path / "run.json")
    meta["turns"] = turn
    run.write_run(meta)
    feedback = (previous.run_dir / "verify" / "report.txt").read_text()
    instructions = (
        f"{loaded.scenario.agent.instructions.rstrip()}\n\n"
        f"Verification of your work failed:\n\n{feedback}\n{CONTINUE_PROMPT}"
    )
    _agent_phase(run, meta, loaded, ws, state, entrant, opts, instructions, turn=turn)
