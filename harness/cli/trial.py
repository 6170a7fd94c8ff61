"""One trial by hand: ``harness setup``, ``run-agent``, ``verify`` and ``exec`` (all three)."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated

import typer

from harness.cli.guard import guarded
from harness.cli.options import (
    AgentOpt,
    AllowFailingOpt,
    RecordOpt,
    ReplayOpt,
    SandboxOpt,
    SeedOpt,
    check_sandbox,
    check_seed,
    current_settings,
    load_named,
    load_registry,
    load_runnable,
    run_options,
)
from harness.cli.phases import announce_phases
from harness.errors import EXIT_FAILED, EXIT_INFRA, EXIT_SUCCESS
from harness.job.jobfile import agent_env
from harness.provision import provision
from harness.trial.commands import execute, run_agent, verify
from harness.trial.containment import (
    BudgetCallsOpt,
    BudgetCallTokensOpt,
    BudgetCostOpt,
    BudgetTokensOpt,
    budget_flags,
)
from harness.trial.result import TrialResult
from harness.trial.workspace import read_state, setup, workspace_path
from harness.trial.workspace_lock import holding


@guarded
def setup_cmd(scenario: str, seed: SeedOpt = None) -> None:
    """Set up a fresh workspace: clone, checkout, copy, patch, exec, spec, baseline."""
    loaded = load_runnable(scenario)
    with holding(workspace_path(loaded, current_settings())):
        path = setup(loaded, current_settings(), check_seed(seed))
        # the toolchain and dependencies, fetched now (with network) for the offline phases
        chosen = provision(loaded, path, read_state(path, loaded).baseline, on_host=True).record()
    if chosen.get("go") or chosen.get("go_modules") or chosen.get("python_wheels"):
        typer.echo(
            f"toolchain: {chosen['go'] or 'image'}; go modules: "
            f"{chosen['go_modules'] or '-'}; python wheels: {chosen['python_wheels'] or '-'}"
        )
    typer.echo(f"workspace ready: {path}")


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
    opts = run_options(agent, model, None, sandbox, replay, record)
    if only_start:  # goagentbench's: the agent is driven by hand, `verify` grades it
        from harness.trial.gab_modes import start_only

        run = start_only(load_runnable(scenario), current_settings(), load_registry(), opts)
        typer.echo(f"run started (no agent ran): {run.path}")
        return
    run = run_agent(load_runnable(scenario), current_settings(), load_registry(), opts)
    typer.echo(f"agent finished: {run.path}")


def _finish(result: TrialResult) -> None:
    from harness.util.escape import for_terminal

    typer.echo(for_terminal((result.run_dir / "verify" / "report.txt").read_text()), nl=False)
    typer.echo(f"result: {result.run_dir}")
    raise typer.Exit(_exit_code(result.outcome))


def _exit_code(outcome: str) -> int:
    return {"success": EXIT_SUCCESS, "error": EXIT_INFRA}.get(outcome, EXIT_FAILED)


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

        graded = report_only(load_named(scenario), current_settings(), check_sandbox(sandbox))
        from harness.util.escape import for_terminal

        typer.echo(for_terminal(graded.text), nl=False)
        raise typer.Exit(_exit_code(graded.outcome))
    result = verify(
        load_named(scenario),
        current_settings(),
        sandbox=check_sandbox(sandbox),
        copy_only=copy_only,
    )
    if result is None:
        typer.echo("hidden files copied into the workspace; run `harness setup` before a real run")
        return
    _finish(result)


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
    budget_call_tokens: BudgetCallTokensOpt = None,
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
    budget = budget_flags(budget_tokens, budget_cost_usd, budget_calls, budget_call_tokens)
    opts = replace(
        run_options(agent, model, seed, sandbox, replay, record, budget, allow_failing_pairs),
        agent_env=agent_env(agent_env_ or []) or None,
        agent_args=tuple(agent_arg or ()),
    )
    loaded, settings, registry = load_runnable(scenario), current_settings(), load_registry()
    announce_phases()  # after the input is checked: nothing is said before a refusal
    _finish(execute(loaded, settings, registry, opts))
