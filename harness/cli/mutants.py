"""The ``harness mutants`` command: parse, call ``harness.grader.mutants``, print the tally.
Wired into the main app in ``harness.cli`` with one line."""

from __future__ import annotations

from typing import Annotated

import typer

from harness.backends import check_backend
from harness.cli.guard import guarded
from harness.config.settings import Settings
from harness.errors import EXIT_FAILED, EXIT_SUCCESS, UserError
from harness.scenario.load import load_scenario


@guarded
def mutants_command(
    scenario: Annotated[str, typer.Argument(help="scenario name")],
    sample: Annotated[int, typer.Option("--sample", help="how many mutants to score")] = 100,
    sandbox: Annotated[str, typer.Option("--sandbox", help="docker (default) or local")] = "docker",
    seed: Annotated[
        str | None, typer.Option("--seed", help="scoring seed (default: the scenario's)")
    ] = None,
    only: Annotated[
        list[str] | None, typer.Option("--mutant", help="score only this mutant id (repeat)")
    ] = None,
    reuse: Annotated[
        bool,
        typer.Option(
            "--reuse/--no-reuse",
            help="take a mutant's line from the scenario's mutants.jsonl when it matches",
        ),
    ] = True,
    list_only: Annotated[
        bool, typer.Option("--list", help="print the sampled mutants' ids and score nothing")
    ] = False,
) -> None:
    """Score mutants of the reference solution through the real verifier; list survivors.

    Each scoring is a line of the scenario's mutants.jsonl (resumable on any machine);
    survivors are fixed in the grader or triaged equivalent in mutants.yml. Exit 1 while
    non-equivalent survivors remain."""
    try:
        from harness.grader.mutants.run import list_mutants, run_mutants
    except ModuleNotFoundError as exc:  # the mutation library is an extra
        raise UserError(
            f"harness mutants needs the mutation library ({exc.name} is not installed)",
            field="mutants",
            fix="pip install 'harness[mutants]' (or -e '.[mutants]' in a clone)",
        ) from None
    if sample < 1:
        raise UserError("--sample must be at least 1", field="--sample", fix="e.g. --sample 100")
    settings = Settings.from_env()
    loaded = load_scenario(scenario, settings.scenario_root)
    if list_only:
        for line in list_mutants(loaded, settings, sample, seed):
            typer.echo(line)
        raise typer.Exit(EXIT_SUCCESS)
    run = run_mutants(
        loaded,
        settings,
        check_backend(sandbox),
        size=sample,
        seed=seed,
        reuse=reuse,
        only=only,
        progress=lambda line: typer.echo(line, err=True),
    )
    typer.echo(f"== {loaded.name}: {len(run.lines)} mutants scored ({run.reused} from the ledger)")
    typer.echo(run.score.line())
    for ident in run.score.survived:
        typer.echo(f"  survived: {ident}")
    for ident in run.score.killed_equivalent:
        typer.echo(f"  killed though triaged equivalent: {ident}")
    raise typer.Exit(EXIT_FAILED if run.score.survived else EXIT_SUCCESS)
