"""``harness report``, ``harness compare``, ``harness board`` and ``harness view``.

The main app wires them: ``app.command("report")(report_command)``,
``app.command("compare")(compare_command)``, ``app.command("board")(board_command)``,
``app.command("view")(view_command)``.
"""

from __future__ import annotations

import functools
import http.server
import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer

from harness.config.settings import Settings
from harness.errors import HarnessError, UserError
from harness.report.board.site import build_board
from harness.report.collect import RunResult
from harness.report.compare import DEFAULT_DELTA, as_dict, find, power_text, text
from harness.report.formats import REPORT_FORMATS
from harness.report.publish import (
    check_markers,
    refuse_uncalibrated,
    update_markdown,
    write_summary_folder,
)
from harness.report.selection import Selection, default_selection, select
from harness.report.summary import summarise

ListOpt = list[str] | None


def _runs(sel: Selection, settings: Settings, notes: list[str] | None = None) -> list[RunResult]:
    return select(sel, settings.results, settings.scenario_root, notes)


def _fail(exc: HarnessError) -> typer.Exit:
    typer.echo(f"harness: {exc.one_line()}", err=True)
    return typer.Exit(exc.exit_code)


ScenariosOpt = Annotated[ListOpt, typer.Option("--scenarios", help="names or globs, comma sep.")]
AgentsOpt = Annotated[ListOpt, typer.Option("--agents", help="agent names, comma separated")]
ModelsOpt = Annotated[ListOpt, typer.Option("--models", help="model names, comma separated")]
AfterOpt = Annotated[str | None, typer.Option("--after", help="runs started on/after (ISO)")]
ReportLimitOpt = Annotated[
    int | None,
    typer.Option(
        "--limit",
        help="most recent N runs per scenario, agent and model (default 1; every run of --job)",
    ),
]
JobOpt = Annotated[str | None, typer.Option("--job", help="only the runs of this job")]
AllVersionsOpt = Annotated[
    bool,
    typer.Option("--all-agent-versions", help="every agent version, one row per agent and model"),
]
AllRunsOpt = Annotated[
    bool, typer.Option("--all-runs", help="every run (all repetitions), not the newest per seat")
]
TokensOpt = Annotated[bool, typer.Option("--include-tokens", help="token columns")]
TasksAfterOpt = Annotated[
    str | None,
    typer.Option("--tasks-after", help="only tasks dated after this ISO date (contamination)"),
]


def report_command(
    scenarios: ScenariosOpt = None,
    agents: AgentsOpt = None,
    models: ModelsOpt = None,
    after: AfterOpt = None,
    limit: ReportLimitOpt = None,
    job: JobOpt = None,
    all_agent_versions: AllVersionsOpt = False,
    include_tokens: TokensOpt = False,
    tasks_after: TasksAfterOpt = None,
    all_runs: AllRunsOpt = False,
    power: Annotated[
        float | None,
        typer.Option("--power", help="print the scenarios and trials this difference needs"),
    ] = None,
    format_: Annotated[str, typer.Option("--format", help="table, csv, json or md")] = "table",
    publish: Annotated[
        bool, typer.Option("--publish", help="write result_summaries/ and update a README")
    ] = False,
    publish_to: Annotated[
        Path | None, typer.Option("--publish-to", help="Markdown file with the markers")
    ] = None,
) -> None:
    """Summarise results: one table per scorer era, entrants ranked by paired tests."""

    try:
        emit = REPORT_FORMATS.load(format_)  # unknown format: UserError naming them
        if power is not None and not 0.0 < power <= 1.0:
            raise UserError(
                f"--power {power} is not a difference in (0, 1]",
                field="--power",
                fix="e.g. --power 0.1 (ten points of score)",
            )
        settings = Settings.from_env()
        sel = default_selection(
            scenarios, agents, models, after, limit, job, all_agent_versions, tasks_after, all_runs
        )
        notes: list[str] = [sel.describe()]
        tables = summarise(_runs(sel, settings, notes))
        if not tables:  # say where it looked (a newcomer outside the project sees why)
            notes.append(f"read the runs under {settings.results}")
            if not settings.project_found:
                notes.append(
                    "no harness project here (no agents.yml); cd into one or set HARNESS_HOME"
                )
        target = None
        if publish or publish_to:  # every refusal before anything is printed or written
            refuse_uncalibrated(tables)  # apptrust: -rc eras are never published
            target = publish_to or settings.project_root / "README.md"
            check_markers(target)
            if not tables:
                raise UserError(
                    "no results to publish",
                    file=settings.results,
                    field="--publish",
                    fix="run some trials first (`harness run ...`), or drop --publish",
                )
        for note in notes:
            typer.echo(f"note: {note}", err=True)
        if power is not None:
            typer.echo(power_text(tables, power), nl=False)
            return
        emit(tables, datetime.now(UTC).isoformat(timespec="seconds"), include_tokens)
        if target is not None:
            folder = write_summary_folder(tables, settings.project_root / "result_summaries")
            update_markdown(tables, target, folder)
            typer.echo(f"published {folder} and updated {target}", err=True)
    except HarnessError as exc:
        raise _fail(exc) from None


def compare_command(
    a: Annotated[str, typer.Argument(help="entrant A: AGENT, AGENT:MODEL or AGENT@VERSION:MODEL")],
    b: Annotated[str, typer.Argument(help="entrant B, named the same way")],
    scenarios: ScenariosOpt = None,
    after: AfterOpt = None,
    limit: ReportLimitOpt = None,
    job: JobOpt = None,
    tasks_after: TasksAfterOpt = None,
    all_runs: AllRunsOpt = False,
    all_agent_versions: AllVersionsOpt = False,
    delta: Annotated[
        float, typer.Option("--delta", help="the difference to plan scenarios and trials for")
    ] = DEFAULT_DELTA,
    format_: Annotated[str, typer.Option("--format", help="text or json")] = "text",
) -> None:
    """Compare two entrants on the scenarios both ran (paired tests, pass@k, power).

    The paired difference, its interval and test, correlation, pass@k and pass^k, and
    the power of the comparison."""

    try:
        if format_ not in ("text", "json"):
            raise UserError(f"unknown format '{format_}'", field="--format", fix="use text or json")
        settings = Settings.from_env()
        sel = default_selection(
            scenarios, None, None, after, limit, job, all_agent_versions, tasks_after, all_runs
        )
        if "@" in a.split(":", 1)[0] or "@" in b.split(":", 1)[0]:
            sel = replace(sel, versions="each")  # a named version: every version apart
        typer.echo(f"note: {sel.describe()}", err=True)
        found = find(summarise(_runs(sel, settings)), a, b, delta)
        if format_ == "json":
            typer.echo(json.dumps([as_dict(c) for c in found], indent=2))
        else:
            typer.echo("\n".join(text(c) for c in found), nl=False)
    except HarnessError as exc:
        raise _fail(exc) from None


def board_command(
    out: Annotated[Path | None, typer.Option("--out", help="site folder; default board/")] = None,
    scenarios: ScenariosOpt = None,
    agents: AgentsOpt = None,
    models: ModelsOpt = None,
    after: AfterOpt = None,
    limit: ReportLimitOpt = None,
    job: JobOpt = None,
    all_agent_versions: AllVersionsOpt = False,
    tasks_after: TasksAfterOpt = None,
    all_runs: AllRunsOpt = False,
) -> None:
    """Write the static results board (open index.html, or `harness view`).

    It shows the runs `harness report` counts with the same options."""

    try:
        settings = Settings.from_env()
        sel = default_selection(
            scenarios, agents, models, after, limit, job, all_agent_versions, tasks_after, all_runs
        )
        runs = _runs(sel, settings)
        out_dir = (out or settings.project_root / "board").resolve()
        index = build_board(runs, out_dir, sel.describe())
    except HarnessError as exc:
        raise _fail(exc) from None
    typer.echo(f"board: {index} ({len(runs)} runs; {sel.describe()})")


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
    """Serve the board on 127.0.0.1; with RUN, print that trial step by step instead.

    A trial is printed as its conversation call by call (tokens, time), the commands the
    agent ran, the failing checks with their evidence, and the diff."""
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
        from harness.util.escape import for_terminal

        typer.echo(for_terminal(render_view(load_view(found))), nl=False)
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
