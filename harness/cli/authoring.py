"""Authoring commands: ``solution save|apply``, ``defect save``, ``new``, ``bump``,
``lock``, ``check``.

Wired into the main app in ``harness.cli`` with one line each.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from harness.authoring.check import DEFAULT_ENTRANTS, check
from harness.authoring.save import apply_solution, save_defect, save_solution
from harness.authoring.scaffold import bump, new_scenario
from harness.backends import check_backend
from harness.cli.guard import guarded
from harness.config.settings import Settings
from harness.errors import EXIT_FAILED, EXIT_SUCCESS, UserError
from harness.scenario.load import list_scenarios, load_scenario
from harness.scenario.lock import lock, lock_path

solution_app = typer.Typer(no_args_is_help=True, help="Save or apply a scenario's solution.")
defect_app = typer.Typer(no_args_is_help=True, help="Save a scenario's control defects.")

SandboxOpt = Annotated[str, typer.Option("--sandbox", help="docker (default) or local")]


def _settings() -> Any:
    return Settings.from_env()


def _load(name: str) -> Any:
    return load_scenario(name, _settings().scenario_root)


def _sandbox(value: str) -> str:
    return check_backend(value)


@solution_app.command("save")
@guarded
def solution_save(scenario: str) -> None:
    """Write the set-up workspace's change as the scenario's solution.patch."""

    saved = save_solution(_load(scenario), _settings())
    typer.echo(f"wrote {saved.path} ({len(saved.files)} files: {', '.join(saved.files)})")


@solution_app.command("apply")
@guarded
def solution_apply(scenario: str) -> None:
    """Apply the reference solution to the set-up workspace (then break it for a defect)."""

    typer.echo(apply_solution(_load(scenario), _settings()))


@defect_app.command("save")
@guarded
def defect_save(
    name: Annotated[str, typer.Argument(help="the defect's name, e.g. off-by-one")],
    scenario: Annotated[str, typer.Argument(help="the scenario")],
    harm: Annotated[str, typer.Option("--harm", help="what a user suffers from this defect")],
    breaks: Annotated[
        str,
        typer.Option("--breaks", help="auto (score it and see) or check names, comma-separated"),
    ] = "auto",
    sandbox: SandboxOpt = "docker",
) -> None:
    """Write the workspace's change on top of the solution as defects/NAME.patch + .yml."""

    named = None if breaks.strip() == "auto" else [b.strip() for b in breaks.split(",") if b]
    saved = save_defect(
        _load(scenario), _settings(), name, breaks=named, harm=harm, sandbox=_sandbox(sandbox)
    )
    typer.echo(f"wrote {saved.path} and {saved.path.with_suffix('.yml').name}")
    typer.echo(f"breaks: {', '.join(saved.breaks)}")


@guarded
def new_command(
    name: Annotated[str, typer.Argument(help="FAMILY/NAME, e.g. py/ledger-rounding")],
    repo: Annotated[
        str, typer.Option("--repo", help="a local clone (bundled) or github.com/org/name")
    ],
    commit: Annotated[str, typer.Option("--commit", help="the starting commit")],
) -> None:
    """Scaffold a scenario: scenario.yml, SPEC.md, hidden/ and a bundle of the commit."""

    settings = _settings()
    folder = new_scenario(settings.scenario_root, name, repo, commit, settings.repo_cache)
    typer.echo(f"created {folder}")
    typer.echo(
        f"next: fill in the TODOs; `harness setup {name}`; make the change; "
        f"`harness solution save {name}`; `harness solution apply {name}`, break it and "
        f"`harness defect save NAME {name} --harm ...`; `harness check {name}`"
    )


@guarded
def bump_command(
    scenario: str,
    minor: Annotated[bool, typer.Option("--minor", help="a compatible change: 1.2 -> 1.3")] = False,
    major: Annotated[bool, typer.Option("--major", help="not comparable: 1.2 -> 2.0")] = False,
) -> None:
    """Copy a scenario to a new versioned folder (<name>-<version>) to change it there."""

    if minor == major:
        raise UserError("say which part to bump", field="--minor/--major", fix="give exactly one")
    target = bump(_load(scenario), _settings().scenario_root, "major" if major else "minor")
    typer.echo(f"created {target}")


@guarded
def lock_command(
    scenarios: Annotated[
        list[str] | None, typer.Argument(help="scenario names; default: all")
    ] = None,
) -> None:
    """Record scenario versions and their sha256 in scenarios/scenarios.lock."""

    root = _settings().scenario_root
    names = scenarios or list_scenarios(root)
    done = lock([_load(n) for n in names], root)
    listed = f" ({', '.join(done)})" if done else ""
    typer.echo(f"{lock_path(root)}: {len(done)} recorded{listed}")


@guarded
def check_command(
    scenario: str,
    sandbox: SandboxOpt = "docker",
    entrant: Annotated[
        list[str] | None,
        typer.Option("--entrant", help="an agent from agents.yml (repeat; default oracle, nop)"),
    ] = None,
    out: Annotated[Path | None, typer.Option("--out", help="also write the summary here")] = None,
) -> None:
    """Validate, lock, controls and 2+ entrants: a summary a reviewer can paste.

    validate runs with --deep when this harness has it. Exit 0 when ready, 1 when not."""

    agents = tuple(entrant or DEFAULT_ENTRANTS)
    if len(set(agents)) < 2:
        raise UserError(
            "a check runs two or more entrants", field="--entrant", fix="repeat --entrant"
        )
    report = check(_load(scenario), _settings(), sandbox=_sandbox(sandbox), entrants=agents)
    text = report.markdown()
    typer.echo(text, nl=False)
    if out is not None:
        out.write_text(text)
    raise typer.Exit(EXIT_SUCCESS if report.ok else EXIT_FAILED)
