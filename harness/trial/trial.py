"""One trial: setup, agent turns, verify; its state typed, carried in memory, recorded.

A ``Trial`` is opened from a set-up workspace (the separate CLI commands ``setup``,
``run-agent`` and ``verify`` each open one) or carried through all phases by ``exec``.
Where each phase runs is the trial's ``Backend``. User mistakes are found before a
result folder exists, so a refused run writes nothing; infrastructure failures are
recorded as ``error``. ``run.json`` is written by ``Trial.save`` only.
"""

from __future__ import annotations

import dataclasses
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import __version__
from harness.agents import Agent, AgentContext, AgentResult, get_agent
from harness.agents.builtin import reference_solution
from harness.backends import Backend, Gateway, GatewaySpec, VerifySpec, get_backend
from harness.config.budget import Budget
from harness.config.entrants import NO_MODEL, LLMEntry, Registry
from harness.config.settings import Settings
from harness.errors import HarnessError, InfraError, UserError
from harness.results import Phase, RunDir, RunMeta, gab, new_run_id, now_iso
from harness.sandbox.base import SandboxSpec
from harness.scenario.model import LoadedScenario
from harness.scoring.appkit.slot import scoring_slot
from harness.trial import containment
from harness.trial import seed as trialseed
from harness.trial.workspace import WorkspaceState, read_state, setup, workspace_path, write_state
from harness.util.fs import read_json, write_atomic, write_json
from harness.util.git import full_diff
from harness.verify.engine import copy_hidden
from harness.verify.outcome import VerifyOutcome
from harness.verify.proof import environment as proof_environment
from harness.verify.proof import grader_verdict
from harness.verify.report import build_report, render_text
from harness.verify.request import make_request
from harness.verify.verdict import decide

POINTER = Path(".git") / "harness" / "run.json"
MAX_CONTINUES = 3
CONTINUE_PROMPT = "Please continue until the problem is solved."


@dataclass(frozen=True)
class RunOptions:
    agent: str
    model: str | None = None
    seed: str | None = None
    sandbox: str = "docker"  # a backend name (harness.backends)
    job: str | None = None
    replay: Path | None = None  # a cassette the gateway serves instead of the fleet
    record: bool = False  # keep the gateway's request/response recording in the run
    trial_key: str | None = None  # the job's name for this trial (resume matches on it)
    repetition: int = 0
    budget: Budget | None = None  # --budget-* limits over the scenario's


@dataclass(frozen=True)
class TrialResult:
    outcome: str
    run_dir: Path
    report: dict[str, Any]
    text: str = ""  # report.txt


@dataclass(frozen=True)
class Entrant:
    """The agent + model of a trial, resolved and checked once: the adapter, its pinned
    and self-reported version, the model, and the fleet file its calls route through."""

    agent: Agent
    name: str
    version: str
    llm: LLMEntry
    fleet_file: Path | None


def resolve_entrant(
    loaded: LoadedScenario,
    settings: Settings,
    registry: Registry,
    opts: RunOptions,
    backend: Backend | None = None,
) -> Entrant:
    """Every check on the entrant that can refuse a run, before anything is written."""
    backend = backend or get_backend(opts.sandbox)
    entry, llm = registry.resolve(opts.agent, opts.model)
    agent = get_agent(opts.agent, entry.adapter)
    reported = backend.agent_version(agent)
    if reported != entry.version:
        raise UserError(
            f"agent '{opts.agent}' reports version {reported} but is pinned to {entry.version}",
            file=registry.agents_path,
            field=f"agents.{opts.agent}.version",
            fix=f"install {opts.agent} {entry.version} or change the pin to {reported}",
        )
    if opts.agent == "oracle":
        reference_solution(loaded, "use --agent oracle")
    return Entrant(agent, entry.name, reported, llm, _model_access(llm, opts, settings))


@dataclass
class Trial:
    """One workspace's trial: scenario, backend, workspace state, run folder, run.json."""

    loaded: LoadedScenario
    settings: Settings
    backend: Backend
    workspace: Path
    state: WorkspaceState
    run: RunDir | None = None
    meta: RunMeta | None = None

    @classmethod
    def open(cls, loaded: LoadedScenario, settings: Settings, sandbox: str = "docker") -> Trial:
        """The trial of the set-up workspace, with the run it already has (if any)."""
        ws = workspace_path(loaded, settings)
        trial = cls(loaded, settings, get_backend(sandbox), ws, read_state(ws, loaded))
        pointer = ws / POINTER
        if pointer.exists():
            run = RunDir.open(Path(read_json(pointer)["path"]))
            if (run.path / "run.json").is_file():  # else its folder was deleted by hand
                trial.run, trial.meta = run, run.read_run()
        return trial

    @classmethod
    def setup(
        cls, loaded: LoadedScenario, settings: Settings, sandbox: str, seed: str | None
    ) -> Trial:
        """A fresh workspace (``harness setup``) and its trial."""
        setup(loaded, settings, seed)
        return cls.open(loaded, settings, sandbox)

    def save(self) -> None:
        """Write run.json: the one place it is written."""
        assert self.run is not None and self.meta is not None
        self.run.write_run(self.meta)

    def _begin_run(self, meta: RunMeta) -> RunDir:
        self.run = RunDir.create(self.settings.results, self.loaded.name, meta.run_id)
        self.meta = meta
        self.save()
        write_json(self.workspace / POINTER, {"run_id": meta.run_id, "path": str(self.run.path)})
        return self.run

    def _meta(self, run_id: str, **fields: Any) -> RunMeta:
        s, loaded = self.state, self.loaded
        return RunMeta(
            run_id=run_id,
            scenario=loaded.name,
            scenario_version=loaded.version,
            scenario_sha=loaded.sha256,
            spec_sha256=s.spec_sha256,
            seed=None,  # the secret seed is recorded only once scoring is over
            commit=s.commit,
            baseline=s.baseline,
            harness_version=__version__,
            **fields,
        )

    def budget(self, opts: RunOptions) -> Budget:
        """The scenario's budget with the job's ``--budget-*`` limits over it."""
        return self.loaded.scenario.budget.merged(opts.budget)

    def secret_seed(self) -> str:
        """The trial's secret seed, held by the harness outside the workspace."""
        return trialseed.load(self.settings.workspace, self.loaded.name, self.state.baseline)

    def _labels(self, phase: str) -> dict[str, str]:
        assert self.run is not None
        job = self.meta.job if self.meta else None
        return {"harness.trial": self.run.run_id, "harness.job": job or "", "harness.phase": phase}

    # ---- agent phase ------------------------------------------------------------------

    def check_fresh(self) -> None:
        """Refuse a second run on one workspace."""
        if self.run is not None or (self.workspace / POINTER).exists():
            raise UserError(
                "this workspace already has a run",
                file=self.workspace,
                field="(workspace)",
                fix=f"run `harness setup {self.loaded.name}` for a fresh workspace",
            )

    def run_agent(self, entrant: Entrant, opts: RunOptions) -> RunDir:
        """Record a new run and its first agent turn; returns the run folder."""
        self.check_fresh()
        run_id = new_run_id(entrant.name, entrant.llm.name)
        meta = self._meta(
            run_id,
            agent=entrant.name,
            agent_version=entrant.version,
            model=entrant.llm.name,
            model_id=entrant.llm.id_for(entrant.name),
            sandbox=self.backend.name,
            sandboxes={"agent": self.backend.name},
            job=opts.job,
            trial_key=opts.trial_key,
            repetition=opts.repetition,
        )
        if entrant.fleet_file is not None:
            meta.fleet = _fleet_fingerprint(entrant.fleet_file)
        record: dict[str, Any] = {}
        containment.record(record, self.loaded.scenario.sandbox, self.budget(opts))
        meta = meta.model_copy(update=record)
        run = self._begin_run(meta)
        self.agent_turn(entrant, opts, self.loaded.scenario.agent.instructions, turn=1)
        return run

    def agent_turn(
        self, entrant: Entrant, opts: RunOptions, instructions: str, *, turn: int
    ) -> None:
        """One agent turn in a fresh sandbox (and gateway); recorded as a phase of the run."""
        run, meta, ws = self.run, self.meta, self.workspace
        assert run is not None and meta is not None
        env = self.loaded.scenario.environment
        llm = entrant.llm
        meta.turns = max(meta.turns, turn)
        phase = run.begin("agent")
        spec = SandboxSpec(
            phase="agent",
            workspace=ws,
            env={"HARNESS_SEED": self.state.seed},
            cpus=env.cpus,
            memory=env.memory,
            pids=env.pids,
            network="none" if llm.name == NO_MODEL else "internal",
            labels=self._labels("agent"),
            policy=self.loaded.scenario.sandbox,
        )
        try:
            ref = self.backend.agent_image(entrant.agent, self.loaded)
            if ref is not None:
                spec.image = ref.tag
                meta.images["agent"] = ref.id
            # the scenario's pinned toolchain and prepared dependencies, as the backend
            # exposes them to the sandbox
            meta.toolchain = self.backend.provision(spec, self.loaded, ws, self.state.baseline)
            self.save()
            if turn == 1:
                gab.write_run_start(ws, meta.as_json())  # goagentbench's .run-start.json
            result = self._agent_in_sandbox(entrant, opts, spec, instructions, turn)
        except UserError:
            if turn == 1:
                shutil.rmtree(run.path, ignore_errors=True)
                (ws / POINTER).unlink(missing_ok=True)
            raise
        except HarnessError as exc:
            run.end(phase, "error", exc.one_line())
            write_atomic(run.path / "workspace.diff", full_diff(ws, self.state.baseline))
            self._gab_progress(write=True)
            raise
        except Exception as exc:  # a docker SDK or OS failure: infrastructure, not the agent
            run.end(phase, "error", f"{type(exc).__name__}: {exc}")
            raise InfraError(f"agent phase failed: {type(exc).__name__}: {exc}") from exc
        except BaseException:  # Ctrl-C or SIGTERM: the sandbox is already removed
            run.end(phase, "interrupted", "stopped by a signal")
            raise
        run.end(phase, result.exit, result.detail + (f" (turn {turn})" if turn > 1 else ""))
        write_atomic(run.path / "workspace.diff", full_diff(ws, self.state.baseline))
        self._gab_progress(write=True)

    def _gab_progress(self, *, write: bool = False) -> dict[str, Any] | None:
        """goagentbench's run progress (None when no agent ran); written to the
        workspace's ``.run-progress.json`` when ``write``."""
        run, meta = self.run, self.meta
        assert run is not None and meta is not None
        if not any(p.name == "agent" for p in run.phases):
            return None
        phases = [p.as_dict() for p in run.phases]
        progress = gab.run_progress(meta.as_json(), phases, run.usage, now_iso())
        if write:
            gab.write_run_progress(self.workspace, progress)
        return progress

    def _agent_in_sandbox(
        self, entrant: Entrant, opts: RunOptions, spec: SandboxSpec, instructions: str, turn: int
    ) -> AgentResult:
        run, meta = self.run, self.meta
        assert run is not None and meta is not None
        llm = entrant.llm
        sandbox = self.backend.sandbox(spec)
        gateway: Gateway | None = None
        try:
            sandbox.start()
            budget = self.budget(opts)
            guard = containment.Guard(sandbox, budget)  # limits and the budget stop the agent
            if llm.name != NO_MODEL:
                gateway = self.backend.gateway(
                    sandbox,
                    GatewaySpec(
                        run.run_id,
                        entrant.name,
                        llm,
                        entrant.fleet_file,
                        opts.replay,
                        opts.record,
                        budget,
                    ),
                )
                meta.images["gateway"] = gateway.image_id
                self.save()
            suffix = "" if turn == 1 else f"turn-{turn}"
            out_dir = run.agent_dir / suffix
            out_dir.mkdir(parents=True, exist_ok=True)
            ctx = AgentContext(
                scenario=self.loaded,
                workspace=self.workspace,
                sandbox=guard.sandbox,  # type: ignore[arg-type]  # a proxy that sees limits
                model=llm,
                seed=self.state.seed,
                out_dir=out_dir,
                timeout_s=self.loaded.scenario.environment.agent_timeout,
                instructions=instructions,
                gateway_url=gateway.url if gateway else None,
                api_key=gateway.key if gateway else None,
            )
            with guard.watching(gateway):
                result = guard.verdict(entrant.agent.run(ctx))
            if gateway is not None:
                usage = _usage(gateway, run.path / "gateway" / suffix, result.self_reported_usage)
                run.usage = merge_usage(run.usage, usage)
            return result
        finally:
            if gateway is not None:
                gateway.stop()
            sandbox.stop()

    # ---- verify phase -----------------------------------------------------------------

    def copy_hidden(self) -> None:
        """Copy the hidden files into the workspace (for scenario authors); marks it."""
        s = self.state
        request = make_request(self.loaded, self.workspace, s.baseline, self.secret_seed())
        copy_hidden(request, self.workspace)
        self.state = dataclasses.replace(s, contaminated=True)
        write_state(self.workspace, self.state)

    def _manual_run(self) -> None:
        """A ``manual`` run for a workspace an agent was run on by hand."""
        meta = self._meta(
            new_run_id("manual", "unknown"),
            agent="manual",
            agent_version="unknown",
            model="unknown",
        )
        self._begin_run(meta)

    def _last_agent_phase(self) -> Phase | None:
        """The last agent turn, or None when no agent ran (a manual run)."""
        assert self.run is not None
        agent_phases = [p for p in self.run.phases if p.name == "agent"]
        return agent_phases[-1] if agent_phases else None

    def verify(self) -> TrialResult:
        """Verify the run's workspace; write verify/report.json and report.txt."""
        s = self.state
        seed = self.secret_seed()
        request = make_request(
            self.loaded, self.workspace, s.baseline, seed, on_host=self.backend.on_host
        )
        slot: dict[str, Any] = {}
        if self.run is None:
            self._manual_run()
        run, meta = self.run, self.meta
        assert run is not None and meta is not None
        meta.sandboxes["verify"] = self.backend.name
        self.save()
        phase = run.begin("verify")
        try:
            outcome, image_id = containment.stopped(run), None  # a limit or budget ended it
            if outcome is None:
                spec = VerifySpec(
                    self.loaded,
                    self.workspace,
                    request,
                    self._labels("verify"),
                    run.verify_dir / "evidence",
                )
                with scoring_slot(request.suite_dir is not None) as slot:  # one app at a time
                    outcome, image_id = self.backend.verify(spec)
            if image_id is not None:
                meta.images["verify"] = image_id
                self.save()
        except UserError:
            run.end(phase, "error", "refused")
            raise
        except (HarnessError, OSError, RuntimeError) as exc:
            detail = (
                exc.one_line() if isinstance(exc, HarnessError) else f"{type(exc).__name__}: {exc}"
            )
            outcome = VerifyOutcome.ungraded(error=detail)
        except BaseException:
            run.end(phase, "interrupted", "stopped by a signal")
            raise
        meta.seed = seed  # recorded only now that scoring is over
        self.save()
        last = self._last_agent_phase()
        verdict = decide(outcome, last.outcome if last else None)
        report = build_report(meta.as_json(), outcome, verdict.outcome, self._gab_progress())
        loaded = self.loaded
        here = proof_environment(
            loaded,
            self.backend.name,
            self.workspace,
            s.baseline,
            on_host=self.backend.on_host,
            image=meta.images.get("verify"),
        )
        report["grader"] = grader_verdict(self.settings.results, loaded.name, loaded.sha256, here)
        report.update(containment.report_fields(meta.as_json(), last))
        report["scoring_slot"] = slot
        text = render_text(report, outcome.report_text)
        write_json(run.verify_dir / "report.json", report)
        write_atomic(run.verify_dir / "report.txt", text)
        run.end(phase, "error" if outcome.error else "ok", outcome.error or "")
        return TrialResult(verdict.outcome, run.path, report, text)

    # ---- a whole trial ----------------------------------------------------------------

    def continue_agent(
        self, entrant: Entrant, opts: RunOptions, previous: TrialResult, turn: int
    ) -> None:
        """Another agent turn on the same workspace, told what verification said (as
        goagentbench's allow-multiple-turns-on-failed-verify does)."""
        instructions = (
            f"{self.loaded.scenario.agent.instructions.rstrip()}\n\n"
            f"Verification of your work failed:\n\n{previous.text}\n{CONTINUE_PROMPT}"
        )
        self.agent_turn(entrant, opts, instructions, turn=turn)

    def execute(self, entrant: Entrant, opts: RunOptions) -> TrialResult:
        """The agent, then verify (plus continue turns where the scenario allows them)."""
        try:
            self.run_agent(entrant, opts)
        except UserError:
            raise
        except HarnessError:
            pass  # recorded in progress.json; verify still writes the report as an error
        result = self.verify()
        turn = 1
        while (
            self.loaded.scenario.agent.allow_multiple_turns_on_failed_verify
            and result.outcome == "failed"
            and turn <= MAX_CONTINUES
        ):
            turn += 1
            try:
                self.continue_agent(entrant, opts, result, turn)
            except UserError:
                raise
            except HarnessError:
                pass  # recorded as the turn's error; the final verify says so
            result = self.verify()
        return result


# ---- the entry points the CLI and the job worker call --------------------------------


def run_agent(
    loaded: LoadedScenario, settings: Settings, registry: Registry, opts: RunOptions
) -> RunDir:
    """``harness run-agent``: run the agent on a set-up workspace and record it."""
    trial = Trial.open(loaded, settings, opts.sandbox)
    trial.check_fresh()
    return trial.run_agent(resolve_entrant(loaded, settings, registry, opts, trial.backend), opts)


def verify(
    loaded: LoadedScenario, settings: Settings, *, sandbox: str = "docker", copy_only: bool = False
) -> TrialResult | None:
    """``harness verify``: verify the workspace's current run (or only copy hidden files)."""
    trial = Trial.open(loaded, settings, sandbox)
    if copy_only:
        trial.copy_hidden()
        return None
    return trial.verify()


def execute(
    loaded: LoadedScenario, settings: Settings, registry: Registry, opts: RunOptions
) -> TrialResult:
    """``harness exec``: setup + run-agent + verify as one trial, carried in memory."""
    backend = get_backend(opts.sandbox)
    entrant = resolve_entrant(loaded, settings, registry, opts, backend)
    return Trial.setup(loaded, settings, opts.sandbox, opts.seed).execute(entrant, opts)


# ---- helpers ---------------------------------------------------------------------------


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


def _model_access(llm: LLMEntry, opts: RunOptions, settings: Settings) -> Path | None:
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
    from harness.fleet.config import load_fleet  # the probe imports httpx: only when used
    from harness.fleet.probe import fleet_fingerprint

    try:
        return fleet_fingerprint(load_fleet(fleet_file))
    except UserError:
        raise
    except Exception as exc:  # a probe failure is recorded, the gateway will judge hosts
        return {"error": f"{type(exc).__name__}: {exc}"}


def _usage(gateway: Gateway, dest: Path, self_reported: dict[str, Any]) -> dict[str, Any]:
    """Tokens, calls, time and cost from the gateway's own record; the agent's claim beside."""
    usage = dict(gateway.collect(dest))
    if self_reported:
        usage["self_reported"] = self_reported
        measured = usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)
        claimed = self_reported.get("total_tokens")
        if claimed is not None and measured and abs(claimed - measured) > 0.05 * measured:
            usage["self_report_disagrees"] = True
    return usage
