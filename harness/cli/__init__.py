"""The ``harness`` command: parse, call, print. Logic lives in the modules it calls."""

from __future__ import annotations

import signal
import sys
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from harness import __version__
from harness.authoring.lock import check_lock
from harness.backends import check_backend
from harness.cli.common import agents_help, quiet_flag_types
from harness.cli.guard import guarded
from harness.cli.phases import announce_phases
from harness.cli.schema import schema_app
from harness.config.budget import Budget
from harness.config.entrants import Registry
from harness.config.project import require_project, require_scenarios
from harness.config.settings import Settings
from harness.errors import EXIT_FAILED, EXIT_INFRA, EXIT_SUCCESS, UserError
from harness.grader.controls import run_controls
from harness.grader.deep import validate_deep
from harness.job.jobfile import agent_env
from harness.provision import provision
from harness.scenario.load import list_scenarios, load_scenario, refuse_draft
from harness.scenario.model import SEED, LoadedScenario
from harness.scenario.repo import commit_exists
from harness.trial.containment import BudgetCallsOpt, BudgetCostOpt, BudgetTokensOpt, budget_flags
from harness.trial.entrant import RunOptions
from harness.trial.trial import TrialResult, execute, run_agent, verify
from harness.trial.workspace import read_state, setup, workspace_path
from harness.trial.workspace_lock import holding
from harness.verify.tests_from import materialize

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Benchmark coding agents paired with LLMs, reproducibly, in containers.",
)
quiet_flag_types()
app.add_typer(schema_app, name="schema")


def _register_subapps() -> None:
    """Sub-commands that live beside the modules they drive."""
    from harness.cli.doctor import doctor_command
    from harness.cli.images import images_app, sandbox_app

    app.add_typer(images_app, name="images")
    app.add_typer(sandbox_app, name="sandbox")
    app.command("doctor")(doctor_command)

    from harness.cli.fleet import fleet_app, gateway_app

    app.add_typer(fleet_app, name="fleet")
    app.add_typer(gateway_app, name="gateway")

    from harness.cli.job import run_command
    from harness.cli.report import board_command, compare_command, report_command, view_command

    app.command("run")(run_command)
    app.command("exec-all", help="Alias of `run` (goagentbench's name).")(run_command)
    app.command("report")(report_command)
    app.command("compare")(compare_command)
    app.command("board")(board_command)
    app.command("view")(view_command)

    from harness.cli import authoring

    app.add_typer(authoring.solution_app, name="solution")
    app.add_typer(authoring.defect_app, name="defect")
    app.command("new")(authoring.new_command)
    app.command("bump")(authoring.bump_command)
    app.command("lock")(authoring.lock_command)
    app.command("check")(authoring.check_command)

    from harness.cli.mine import mine_command

    app.command("mine")(mine_command)

    from harness.cli.mutants import mutants_command

    app.command("mutants")(mutants_command)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"harness {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", help="print the version and exit", is_eager=True, callback=_print_version
        ),
    ] = False,
) -> None:
    """Benchmark coding agents paired with LLMs, reproducibly, in containers."""


AGENT_HELP = typer.Option("--agent", help="a name from agents.yml")
AgentOpt = Annotated[str, AGENT_HELP]

SandboxOpt = Annotated[str, typer.Option("--sandbox", help="docker (default) or local")]
ReplayOpt = Annotated[
    Path | None, typer.Option("--replay", help="a cassette the gateway serves instead of the fleet")
]
RecordOpt = Annotated[
    bool, typer.Option("--record", help="keep the gateway's request/response recording")
]
AllowFailingOpt = Annotated[
    bool,
    typer.Option(
        "--allow-failing-pairs",
        help="run an agent x model pair `harness fleet check` found to fail",
    ),
]
SeedOpt = Annotated[
    str | None,
    typer.Option("--seed", help="16 hex digits: replay a trial's seed; default: a fresh one"),
]


def _settings() -> Settings:
    return Settings.from_env()


def _load(name: str) -> LoadedScenario:
    return load_scenario(name, require_scenarios(_settings()))


def _load_runnable(name: str) -> LoadedScenario:
    """The scenario a new run is made of: a locked version whose folder changed since is
    refused (its results would carry a version they are not of)."""
    root = require_scenarios(_settings())
    loaded = load_scenario(name, root)
    check_lock(loaded, root)
    return loaded


def _sandbox(value: str) -> str:
    return check_backend(value)


def _seed(value: str | None) -> str | None:
    if value is None:
        return None
    if not SEED.match(value.lower()):  # the same rule as scenario.yml's seed
        raise UserError(
            f"'{value}' is not 16 hex digits", field="--seed", fix="e.g. --seed 00c0ffee00c0ffee"
        )
    return value.lower()


def _options(
    agent: str,
    model: str | None,
    seed: str | None,
    sandbox: str,
    replay: Path | None,
    record: bool,
    budget: Budget | None = None,
    allow_failing_pairs: bool = False,
) -> RunOptions:
    """The options of one trial, from the flags ``run-agent`` and ``exec`` share."""
    return RunOptions(
        agent=agent,
        model=model,
        seed=_seed(seed),
        sandbox=_sandbox(sandbox),
        replay=replay.resolve() if replay else None,
        record=record,
        budget=budget,
        allow_failing_pairs=allow_failing_pairs,
    )


def _registry() -> Registry:
    return Registry.load(require_project(_settings()))


@app.command()
@guarded
def validate(
    scenarios: Annotated[
        list[str] | None, typer.Argument(help="scenario names; default: all")
    ] = None,
    deep: Annotated[
        bool,
        typer.Option(
            "--deep",
            help="also build the baseline and the solution with the hidden tests in the "
            "scenario's environment (no agent); exit 3 when the environment cannot",
        ),
    ] = False,
    sandbox: SandboxOpt = "docker",
) -> None:
    """Check scenario files, the files they name, and that each commit exists."""
    settings = _settings()
    names = scenarios or list_scenarios(require_scenarios(settings))
    if not names:
        raise UserError(
            "no scenarios found",
            file=settings.scenario_root,
            field="(scenarios)",
            fix="set HARNESS_SCENARIO_ROOT or create scenarios/<family>/<name>/scenario.yml",
        )
    problems = worst = 0
    for name in names:
        try:
            loaded = load_scenario(name, settings.scenario_root)
            check_lock(loaded, settings.scenario_root)  # a locked version must not change
            refuse_draft(loaded)
            exists = commit_exists(loaded, settings.repo_cache, settings.skip_remote)
            if exists is False:
                raise UserError(
                    f"commit {loaded.scenario.commit} does not exist",
                    file=loaded.path,
                    field="commit",
                    fix="use a commit that is in the repository",
                )
            if exists and loaded.scenario.verify.tests_from:
                materialize(loaded, settings)  # the fix commit holds the listed tests
            note = " (remote commit check skipped)" if exists is None else ""
            typer.echo(f"valid   {name}{note}")
            if deep:
                report = validate_deep(loaded, settings, _sandbox(sandbox))
                typer.echo(f"deep    {name}: toolchain {report.toolchain}")
                typer.echo("\n".join(report.lines))
                worst = max(worst, report.exit_code)
        except UserError as exc:
            problems += 1
            typer.echo(f"invalid {name}: {exc.one_line()}", err=True)
    if problems:
        raise typer.Exit(2)
    if worst:
        raise typer.Exit(worst)


app.command("validate-scenario", help="Alias of `validate` (goagentbench's name).")(validate)


@app.command("setup")
@guarded
def setup_cmd(scenario: str, seed: SeedOpt = None) -> None:
    """Set up a fresh workspace: clone, checkout, copy, patch, exec, spec, baseline."""
    loaded = _load_runnable(scenario)
    with holding(workspace_path(loaded, _settings())):
        path = setup(loaded, _settings(), _seed(seed))
        # the toolchain and dependencies, fetched now (with network) for the offline phases
        chosen = provision(loaded, path, read_state(path, loaded).baseline, on_host=True).record()
    if chosen.get("go") or chosen.get("go_modules") or chosen.get("python_wheels"):
        typer.echo(
            f"toolchain: {chosen['go'] or 'image'}; go modules: "
            f"{chosen['go_modules'] or '-'}; python wheels: {chosen['python_wheels'] or '-'}"
        )
    typer.echo(f"workspace ready: {path}")


@app.command("run-agent")
@guarded
def run_agent_cmd(
    scenario: str,
    agent: AgentOpt,
    model: Annotated[str | None, typer.Option("--model", help="a name from llms.yml")] = None,
    sandbox: SandboxOpt = "docker",
    replay: ReplayOpt = None,
    record: RecordOpt = False,
    only_start: Annotated[
        bool,
        typer.Option("--only-start", help="only record the run and .run-start.json; run no agent"),
    ] = False,
) -> None:
    """Run an agent on a set-up workspace (records run.json, progress.json, agent/)."""
    opts = _options(agent, model, None, sandbox, replay, record)
    if only_start:  # goagentbench's: the agent is driven by hand, `verify` grades it
        from harness.trial.gab_modes import start_only

        run = start_only(_load_runnable(scenario), _settings(), _registry(), opts)
        typer.echo(f"run started (no agent ran): {run.path}")
        return
    run = run_agent(_load_runnable(scenario), _settings(), _registry(), opts)
    typer.echo(f"agent finished: {run.path}")


def _finish(result: TrialResult) -> None:
    from harness.util.escape import for_terminal

    typer.echo(for_terminal((result.run_dir / "verify" / "report.txt").read_text()), nl=False)
    typer.echo(f"result: {result.run_dir}")
    raise typer.Exit(_exit_code(result.outcome))


def _exit_code(outcome: str) -> int:
    return {"success": EXIT_SUCCESS, "error": EXIT_INFRA}.get(outcome, EXIT_FAILED)


@app.command("verify")
@guarded
def verify_cmd(
    scenario: str,
    copy_only: Annotated[
        bool,
        typer.Option(
            "--copy-only", help="only copy hidden files into the workspace (for scenario authors)"
        ),
    ] = False,
    sandbox: SandboxOpt = "docker",
    only_report: Annotated[
        bool,
        typer.Option("--only-report", help="print the report without writing any results"),
    ] = False,
) -> None:
    """Verify the agent's work in a fresh copy with the hidden material; write the report."""
    if only_report:
        from harness.trial.gab_modes import report_only

        graded = report_only(_load(scenario), _settings(), _sandbox(sandbox))
        from harness.util.escape import for_terminal

        typer.echo(for_terminal(graded.text), nl=False)
        raise typer.Exit(_exit_code(graded.outcome))
    result = verify(
        _load(scenario),
        _settings(),
        sandbox=_sandbox(sandbox),
        copy_only=copy_only,
    )
    if result is None:
        typer.echo("hidden files copied into the workspace; run `harness setup` before a real run")
        return
    _finish(result)


@app.command("exec")
@guarded
def exec_cmd(
    scenario: str,
    agent: AgentOpt,
    model: Annotated[str | None, typer.Option("--model", help="a name from llms.yml")] = None,
    seed: SeedOpt = None,
    sandbox: SandboxOpt = "docker",
    replay: ReplayOpt = None,
    record: RecordOpt = False,
    budget_tokens: BudgetTokensOpt = None,
    budget_cost_usd: BudgetCostOpt = None,
    budget_calls: BudgetCallsOpt = None,
    allow_failing_pairs: AllowFailingOpt = False,
    agent_env_: Annotated[
        list[str] | None,
        typer.Option("--agent-env", help="KEY=VALUE in the agent's environment (repeatable)"),
    ] = None,
    agent_arg: Annotated[
        list[str] | None,
        typer.Option("--agent-arg", help="an argument added to the agent's command (repeatable)"),
    ] = None,
) -> None:
    """setup + run-agent + verify. Exit 0 success, 1 failed, 2 bad input, 3 infrastructure."""
    budget = budget_flags(budget_tokens, budget_cost_usd, budget_calls)
    opts = replace(
        _options(agent, model, seed, sandbox, replay, record, budget, allow_failing_pairs),
        agent_env=agent_env(agent_env_ or []) or None,
        agent_args=tuple(agent_arg or ()),
    )
    loaded, settings, registry = _load_runnable(scenario), _settings(), _registry()
    announce_phases()  # after the input is checked: nothing is said before a refusal
    _finish(execute(loaded, settings, registry, opts))


@app.command("scenarios")
@guarded
def scenarios_cmd() -> None:
    """List scenarios with their classification and version."""
    root = require_scenarios(_settings())
    names = list_scenarios(root)
    if not names:
        raise UserError(
            "no scenarios found",
            file=root,
            field="(scenarios)",
            fix="create scenarios/<family>/<name>/scenario.yml or set HARNESS_SCENARIO_ROOT",
        )
    width = max(32, *(len(n) + 1 for n in names))  # long names keep the columns
    for name in names:
        try:
            s = load_scenario(name, root)
        except UserError as exc:
            typer.echo(f"{name:{width}} INVALID {exc.one_line()}")
            continue
        c = s.scenario.classification
        props = [
            p
            for p, on in (
                ("has-spec", c.has_spec),
                ("single-package", c.single_package),
                ("sees-failing-tests", c.sees_failing_tests),
            )
            if on
        ]
        typer.echo(f"{name:{width}} v{s.version:8} {c.type:14} {','.join(props) or '-'}")


@app.command("controls")
@guarded
def controls_cmd(
    scenarios: Annotated[list[str] | None, typer.Argument(help="scenario names")] = None,
    sandbox: SandboxOpt = "docker",
    containment: Annotated[
        bool,
        typer.Option(
            "--containment",
            help="play the attack catalogue as real trials; CONTAINED / NOT CONTAINED each",
        ),
    ] = False,
    attack: Annotated[
        list[str] | None, typer.Option("--attack", help="only these attacks (repeatable)")
    ] = None,
    reuse: Annotated[
        bool,
        typer.Option(
            "--reuse",
            help="read each tree's scoring kept by an earlier run when nothing it depends on "
            "changed (after editing a defect's breaks:); a scenario with a calibration "
            "ledger also gets each new first scoring as a line of it",
        ),
    ] = False,
) -> None:
    """Prove the grader: HIGH, LOW, ISOLATION, CRITICAL, DETERMINISM; writes controls.json.
    With --containment: prove the sandbox instead, attack by attack."""
    if containment:
        from harness.grader.containment.catalogue import load_attacks
        from harness.grader.containment.control import run_catalogue

        attacks = load_attacks(names=attack)
        results = run_catalogue(attacks, _settings(), _sandbox(sandbox), typer.echo)
        bad = [r for r in results if not r.contained]
        typer.echo(f"{len(results) - len(bad)}/{len(results)} contained")
        raise typer.Exit(EXIT_FAILED if bad else EXIT_SUCCESS)
    if not scenarios:
        raise UserError(
            "name the scenarios to prove",
            field="SCENARIOS",
            fix="harness controls SCENARIO... (or --containment for the attack catalogue)",
        )
    untrusted = 0
    for name in scenarios:
        report = run_controls(
            _load(name),
            _settings(),
            _sandbox(sandbox),
            reuse=reuse,
            progress=lambda line: typer.echo(line, err=True),
        )
        typer.echo(f"== {name}\n{report.text()}")
        untrusted += not report.trusted
    raise typer.Exit(EXIT_FAILED if untrusted else EXIT_SUCCESS)


@app.command("coverage")
@guarded
def coverage_cmd(
    scenario: Annotated[str, typer.Argument(help="scenario name")],
) -> None:
    """Each SPEC MUST id, the checks verifying it, the defects violating it (exit 1: a hole)."""
    from harness.grader.must_coverage import coverage

    report = coverage(_load(scenario), _settings().results)
    typer.echo(report.text(), nl=False)
    raise typer.Exit(EXIT_SUCCESS if report.complete else EXIT_FAILED)


@app.command("calibrate")
@guarded
def calibrate_cmd(
    scenario: Annotated[str, typer.Argument(help="scenario name")],
    seeds: Annotated[int, typer.Option("--seeds", help="how many seeds to score over")] = 3,
    sandbox: SandboxOpt = "docker",
    reuse: Annotated[
        bool,
        typer.Option("--reuse", help="read scorings kept by an earlier, interrupted run"),
    ] = False,
) -> None:
    """Score reference, LOW and defects over seeds; write a calibrated thresholds file."""
    from harness.grader.calibrate import calibrate

    text, proposal = calibrate(
        _load(scenario),
        _settings(),
        _sandbox(sandbox),
        seeds,
        progress=lambda line: typer.echo(line, err=True),
        reuse=reuse,
    )
    typer.echo(text, nl=False)
    raise typer.Exit(EXIT_SUCCESS if proposal.bar is not None else EXIT_FAILED)


def _terminate(signum: int, _frame: object) -> None:
    """SIGTERM unwinds like Ctrl-C, so every ``finally`` removes its containers."""
    raise SystemExit(143)


def main() -> None:
    """Entry point of the ``harness`` console script."""
    signal.signal(signal.SIGTERM, _terminate)
    _register_subapps()
    if "--help" in sys.argv[1:]:
        AGENT_HELP.help = agents_help(_settings())
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
