"""The ``harness`` command: parse, call, print. Logic lives in the modules it calls."""

from __future__ import annotations

import signal
import sys
from typing import Annotated

import typer

from harness import __version__
from harness.cli.common import agents_help, quiet_flag_types
from harness.cli.grader import calibrate_cmd, controls_cmd, coverage_cmd
from harness.cli.options import AGENT_HELP, current_settings
from harness.cli.scenarios import scenarios_cmd, validate
from harness.cli.schema import schema_app
from harness.cli.trial import exec_cmd, run_agent_cmd, setup_cmd, verify_cmd

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


# The commands of one trial, a scenario's checks and the grader's proofs, in the order
# `harness --help` lists them.
app.command("validate")(validate)
app.command("validate-scenario", help="Alias of `validate` (goagentbench's name).")(validate)
app.command("setup")(setup_cmd)
app.command("run-agent")(run_agent_cmd)
app.command("verify")(verify_cmd)
app.command("exec")(exec_cmd)
app.command("scenarios")(scenarios_cmd)
app.command("controls")(controls_cmd)
app.command("coverage")(coverage_cmd)
app.command("calibrate")(calibrate_cmd)


def _terminate(signum: int, _frame: object) -> None:
    """SIGTERM unwinds like Ctrl-C, so every ``finally`` removes its containers."""
    raise SystemExit(143)


def main() -> None:
    """Entry point of the ``harness`` console script."""
    signal.signal(signal.SIGTERM, _terminate)
    _register_subapps()
    if "--help" in sys.argv[1:]:
        AGENT_HELP.help = agents_help(current_settings())
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
