"""``harness report``, ``harness board`` and ``harness view``.

The lead wires them into the main app: ``app.command("report")(report_command)``,
``app.command("board")(board_command)``, ``app.command("view")(view_command)``.
"""

from __future__ import annotations

import functools
import http.server
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from harness.config.settings import Settings
from harness.errors import HarnessError, UserError
from harness.report.board.site import build_board
from harness.report.collect import Filters, RunResult, collect
from harness.report.publish import (
    check_markers,
    refuse_uncalibrated,
    update_markdown,
    write_summary_folder,
)
from harness.report.render import FORMATS, print_tables, to_csv, to_json, to_markdown
from harness.report.summary import summarise

ListOpt = list[str] | None


def _split(values: ListOpt) -> list[str]:
    return [p.strip() for v in values or [] for p in v.split(",") if p.strip()]


def _runs(
    scenarios: ListOpt,
    agents: ListOpt,
    models: ListOpt,
    after: str | None,
    limit: int | None,
    settings: Settings,
) -> list[RunResult]:
    if limit is not None and limit < 1:
        raise UserError("--limit must be at least 1", field="--limit", fix="e.g. --limit 5")
    if after is not None:
        try:
            datetime.fromisoformat(after)
        except ValueError:
            raise UserError(
                f"'{after}' is not an ISO date", field="--after", fix="e.g. --after 2025-01-31"
            ) from None
    filters = Filters(_split(scenarios), _split(agents), _split(models), after, limit)
    return collect(settings.results, filters)


def _fail(exc: HarnessError) -> typer.Exit:
    typer.echo(f"harness: {exc.one_line()}", err=True)
    return typer.Exit(exc.exit_code)


ScenariosOpt = Annotated[ListOpt, typer.Option("--scenarios", help="names or globs, comma sep.")]
AgentsOpt = Annotated[ListOpt, typer.Option("--agents", help="agent names, comma separated")]
ModelsOpt = Annotated[ListOpt, typer.Option("--models", help="model names, comma separated")]
AfterOpt = Annotated[str | None, typer.Option("--after", help="runs started on/after (ISO)")]
LimitOpt = Annotated[
    int | None, typer.Option("--limit", help="most recent N runs per entrant and scenario")
]


def report_command(
    scenarios: ScenariosOpt = None,
    agents: AgentsOpt = None,
    models: ModelsOpt = None,
    after: AfterOpt = None,
    limit: LimitOpt = None,
    format_: Annotated[str, typer.Option("--format", help="table, csv, json or md")] = "table",
    publish: Annotated[
        bool, typer.Option("--publish", help="write result_summaries/ and update a README")
    ] = False,
    publish_to: Annotated[
        Path | None, typer.Option("--publish-to", help="Markdown file with the markers")
    ] = None,
) -> None:
    """Summarise results: one table per scorer era, entrants ranked with honest errors."""

    try:
        if format_ not in FORMATS:
            raise UserError(
                f"unknown format '{format_}'",
                field="--format",
                fix=f"use one of: {', '.join(FORMATS)}",
            )
        settings = Settings.from_env()
        tables = summarise(_runs(scenarios, agents, models, after, limit, settings))
        if format_ == "table":
            console = Console()
            if not console.is_terminal:
                console = Console(width=240)
            print_tables(tables, console)
        elif format_ == "csv":
            typer.echo(to_csv(tables), nl=False)
        elif format_ == "json":
            typer.echo(to_json(tables, datetime.now(UTC).isoformat(timespec="seconds")), nl=False)
        else:
            typer.echo(to_markdown(tables), nl=False)
        if publish or publish_to:
            refuse_uncalibrated(tables)  # apptrust: -rc eras are never published
            target = publish_to or settings.project_root / "README.md"
            check_markers(target)  # a refusal (exit 2) writes nothing
            folder = write_summary_folder(tables, settings.project_root / "result_summaries")
            update_markdown(tables, target, folder)
            typer.echo(f"published {folder} and updated {target}", err=True)
    except HarnessError as exc:
        raise _fail(exc) from None


def board_command(
    out: Annotated[Path | None, typer.Option("--out", help="site folder; default board/")] = None,
    scenarios: ScenariosOpt = None,
    agents: AgentsOpt = None,
    models: ModelsOpt = None,
    after: AfterOpt = None,
    limit: LimitOpt = None,
) -> None:
    """Write the static results board (open index.html, or `harness view`)."""

    try:
        settings = Settings.from_env()
        runs = _runs(scenarios, agents, models, after, limit, settings)
        index = build_board(runs, (out or settings.project_root / "board").resolve())
    except HarnessError as exc:
        raise _fail(exc) from None
    typer.echo(f"board: {index} ({len(runs)} runs)")


def serve(directory: Path, port: int) -> http.server.ThreadingHTTPServer:
    """An http.server bound to 127.0.0.1 serving ``directory`` (port 0: any free one)."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(directory))
    return http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)


def view_command(
    run: Annotated[
        str | None,
        typer.Argument(help="a run id or run folder: print what the agent did, step by step"),
    ] = None,
    directory: Annotated[
        Path | None, typer.Option("--dir", help="board folder; default board/")
    ] = None,
    port: Annotated[int, typer.Option("--port", help="0 picks a free port")] = 8765,
    rebuild: Annotated[bool, typer.Option("--rebuild", help="build the board first")] = False,
) -> None:
    """Serve the board on 127.0.0.1 (http.server); with RUN, print that trial instead:
    its conversation call by call (tokens, time), commands, failing checks, diff."""
    settings = Settings.from_env()
    if run is not None:
        from harness.report.trialview import find_run, load_view, render_view

        found = find_run(settings.results, run)
        if found is None:
            raise _fail(
                UserError(
                    f"no run '{run}'",
                    file=settings.results,
                    field="RUN",
                    fix="give a run id (a folder name under results/<scenario>/) or its path",
                )
            )
        typer.echo(render_view(load_view(found)), nl=False)
        return
    folder = (directory or settings.project_root / "board").resolve()
    if rebuild or not (folder / "index.html").is_file():
        board_command(out=folder)
    server = serve(folder, port)
    typer.echo(f"serving {folder} at http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C stops)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
