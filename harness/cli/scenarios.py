"""``harness validate`` (alias ``validate-scenario``) and ``harness scenarios``: check
scenario files, list scenarios."""

from __future__ import annotations

from typing import Annotated

import typer

from harness.cli.guard import guarded
from harness.cli.options import (
    SandboxOpt,
    check_sandbox,
    current_settings,
)
from harness.config.project import require_scenarios
from harness.errors import UserError
from harness.grader.deep import validate_deep
from harness.scenario.load import list_scenarios, load_scenario, refuse_draft
from harness.scenario.lock import check_lock
from harness.scenario.repo import commit_exists
from harness.verify.tests_from import materialize


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
    settings = current_settings()
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
                report = validate_deep(loaded, settings, check_sandbox(sandbox))
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


@guarded
def scenarios_cmd() -> None:
    """List scenarios with their classification and version."""
    root = require_scenarios(current_settings())
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
