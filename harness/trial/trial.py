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
from harness.agents import AgentContext, AgentResult
from harness.backends import Backend, Gateway, GatewaySpec, VerifySpec, get_backend
from harness.config.budget import Budget
from harness.config.entrants import NO_MODEL
from harness.config.settings import Settings
from harness.errors import HarnessError, InfraError, UserError
from harness.results import Phase, RunDir, RunMeta, gab, new_run_id
from harness.sandbox.base import SandboxSpec
from harness.scenario.model import LoadedScenario
from harness.trial import containment
from harness.trial import seed as trialseed
from harness.trial.entrant import (
    Entrant,
    RunOptions,
    agent_extras,
    fleet_fingerprint,
)
from harness.trial.hooks import emit, error_fields, seconds_since
from harness.trial.reporting import trial_report
from harness.trial.result import TrialResult
from harness.trial.slot_log import take_slot
from harness.trial.usage import gab_progress, gateway_usage, merge_usage
from harness.trial.workspace import WorkspaceState, read_state, setup, workspace_path, write_state
from harness.trial.writefail import record_failed_write
from harness.util import trialgit
from harness.util.fs import read_json, write_atomic, write_json
from harness.verify.flow import copy_hidden_into
from harness.verify.outcome import VerifyOutcome
from harness.verify.request import make_request
from harness.verify.verdict import decide

POINTER = "run.json"  # in harness's own folder beside the workspace (trialgit.private_dir)
MAX_CONTINUES = 3
CONTINUE_PROMPT = "Please continue until the problem is solved."


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
        pointer = trialgit.private_dir(ws) / POINTER
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
        write_json(
            trialgit.private_dir(self.workspace) / POINTER,
            {"run_id": meta.run_id, "path": str(self.run.path)},
        )
        self.log(
            "start",
            scenario=self.loaded.name,
            agent=meta.agent,
            model=meta.model,
            sandbox=self.backend.name,
            job=meta.job,
        )
        self.log("setup", workspace=str(self.workspace), commit=meta.commit, baseline=meta.baseline)
        return self.run

    def log(self, event: str, **fields: Any) -> None:
        """One event into ``<run>/trial.log`` (and to hooks): see ``trial/hooks.py``."""
        if self.run is not None:
            emit(self.run.path, self.run.run_id, event, **fields)

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
        if self.run is not None or (trialgit.private_dir(self.workspace) / POINTER).exists():
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
            meta.fleet = fleet_fingerprint(entrant.fleet_file)
        record: dict[str, Any] = {}
        containment.record(record, self.loaded.scenario.sandbox, self.budget(opts))
        record.update(agent_extras(opts))  # --agent-env / --agent-arg, as given
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
        self.log(
            "agent-start", turn=turn, agent=meta.agent, model=meta.model, sandbox=self.backend.name
        )
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
                # goagentbench's .run-start.json, with the workspace as the agent sees it
                seen = str(ws) if self.backend.on_host else spec.project_dir
                gab.write_run_start(ws, meta.as_json(), seen)
            result = self._agent_in_sandbox(entrant, opts, spec, instructions, turn)
        except UserError:
            if turn == 1:
                shutil.rmtree(run.path, ignore_errors=True)
                (trialgit.private_dir(ws) / POINTER).unlink(missing_ok=True)
            raise
        except HarnessError as exc:
            run.end(phase, "error", exc.one_line())
            self._log_error("agent", exc, turn)
            self._record_diff()
            self._gab_progress(write=True)
            raise
        except Exception as exc:  # a docker SDK or OS failure: infrastructure, not the agent
            run.end(phase, "error", f"{type(exc).__name__}: {exc}")
            self._log_error("agent", exc, turn)
            raise InfraError(f"agent phase failed: {type(exc).__name__}: {exc}") from exc
        except BaseException:  # Ctrl-C or SIGTERM: the sandbox is already removed
            run.end(phase, "interrupted", "stopped by a signal")
            self.log("cancel", phase="agent", turn=turn)
            raise
        run.end(phase, result.exit, result.detail + (f" (turn {turn})" if turn > 1 else ""))
        self.log("agent-end", turn=turn, exit=result.exit, detail=result.detail, usage=run.usage)
        self._record_diff()
        self._gab_progress(write=True)

    def _record_diff(self) -> None:
        """``workspace.diff`` from harness's own git dir; how it came out goes into
        run.json (``workspace_diff``) and so into the report: never silently missing."""
        assert self.run is not None and self.meta is not None
        record = trialgit.write_diff(
            self.workspace, self.state.baseline, self.run.path / "workspace.diff"
        )
        self.meta = self.meta.model_copy(update={"workspace_diff": record.as_json()})
        self.save()

    def _gab_progress(self, *, write: bool = False) -> dict[str, Any] | None:
        """goagentbench's run progress (trial/usage.py ``gab_progress``)."""
        assert self.run is not None and self.meta is not None
        return gab_progress(self.run, self.meta, self.workspace, write=write)

    def _agent_in_sandbox(
        self, entrant: Entrant, opts: RunOptions, spec: SandboxSpec, instructions: str, turn: int
    ) -> AgentResult:
        run, meta = self.run, self.meta
        assert run is not None and meta is not None
        llm = entrant.llm
        sandbox = self.backend.sandbox(spec)
        gateway: Gateway | None = None
        try:
            if llm.name != NO_MODEL or getattr(entrant.agent, "needs_sandbox", True):
                sandbox.start()  # an agent that says it needs none (the oracle) saves ~1 s
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
            self.log("gateway", url=gateway.url if gateway is not None else None)
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
                extra_env=dict(opts.agent_env or {}),
                extra_args=list(opts.agent_args),
            )
            with guard.watching(gateway):
                result = guard.verdict(entrant.agent.run(ctx))
            if gateway is not None:
                usage = gateway_usage(
                    gateway, run.path / "gateway" / suffix, result.self_reported_usage
                )
                run.usage = merge_usage(run.usage, usage)
                result = guard.measured(result, usage)  # the budget line from telemetry
            guard.raise_fault()  # a cassette miss or a fleet that cannot answer: error
            return result
        finally:
            if gateway is not None:
                gateway.stop()
            sandbox.stop()  # safe when it never started

    # ---- verify phase -----------------------------------------------------------------

    def copy_hidden(self) -> None:
        """Copy the hidden files into the workspace (for scenario authors); marks it."""
        s = self.state
        request = make_request(
            self.loaded, self.workspace, s.baseline, self.secret_seed(), settings=self.settings
        )
        copy_hidden_into(request, self.workspace)
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
            self.loaded,
            self.workspace,
            s.baseline,
            seed,
            on_host=self.backend.on_host,
            settings=self.settings,
        )
        slot: dict[str, Any] = {}
        if self.run is None:
            self._manual_run()
        run, meta = self.run, self.meta
        assert run is not None and meta is not None
        meta.sandboxes["verify"] = self.backend.name
        self.save()
        phase = run.begin("verify")
        self.log(
            "verify-start",
            sandbox=self.backend.name,
            scorer="suite" if request.suite_dir else "tests",
        )
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
                with take_slot(request.suite_dir is not None) as slot:  # one app at a time
                    outcome, image_id = self.backend.verify(spec)
            if image_id is not None:
                meta.images["verify"] = image_id
                self.save()
        except UserError as exc:
            run.end(phase, "error", "refused")
            self._log_error("verify", exc)
            raise
        except (HarnessError, OSError, RuntimeError) as exc:
            self._log_error("verify", exc)
            detail = (
                exc.one_line() if isinstance(exc, HarnessError) else f"{type(exc).__name__}: {exc}"
            )
            outcome = VerifyOutcome.ungraded(error=detail)
        except BaseException:
            run.end(phase, "interrupted", "stopped by a signal")
            self.log("cancel", phase="verify")
            raise
        meta.seed = seed  # recorded only now that scoring is over
        self.save()
        last = self._last_agent_phase()
        verdict = decide(outcome, last.outcome if last else None)
        report, text = trial_report(
            self, self._gab_progress(), outcome, verdict.outcome, last, slot
        )
        write_json(run.verify_dir / "report.json", report)
        gab.write_verification_report(run.path, report)  # goagentbench's <run>.verify.json
        write_atomic(run.verify_dir / "report.txt", text)
        run.end(phase, "error" if outcome.error else "ok", outcome.error or "")
        fields = {k: report[k] for k in ("success", "score", "era", "error")}
        self.log("verdict", outcome=verdict.outcome, **fields)
        self.log("end", outcome=verdict.outcome, duration_s=seconds_since(meta.started_at))
        return TrialResult(verdict.outcome, run.path, report, text)

    def _log_error(self, phase: str, exc: BaseException, turn: int | None = None) -> None:
        """An ``error`` event naming the phase and the one-line cause."""
        self.log("error", **error_fields(phase, exc, turn))

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
        """The agent, then verify (plus continue turns where the scenario allows them); a
        write that fails on the way (a full disk) ends the run as ``error``, or removes it."""
        try:
            return self._execute(entrant, opts)
        except OSError as exc:
            return record_failed_write(self, exc, POINTER)

    def _execute(self, entrant: Entrant, opts: RunOptions) -> TrialResult:
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
