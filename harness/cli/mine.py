"""The ``harness mine`` command: parse, call ``harness.authoring.mine``, print the funnel.
Wired into the main app in ``harness.cli`` with one line."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from harness.authoring.mine.funnel import STAGES
from harness.authoring.mine.prove import RUNS
from harness.authoring.mine.run import MineOptions, mine
from harness.backends import check_backend
from harness.cli.guard import guarded
from harness.config.settings import Settings
from harness.errors import UserError


@guarded
def mine_command(
    repo: Annotated[str, typer.Argument(help="a mirror or clone, a .bundle, or a git URL")],
    out: Annotated[
        Path, typer.Option("--out", help="where drafts (go/, py/) and funnel.md/json go")
    ] = Path("mined"),
    since: Annotated[
        str | None, typer.Option("--since", help="only commits on or after DATE (YYYY-MM-DD)")
    ] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", help="walk at most N first-parent commits")
    ] = None,
    sandbox: Annotated[str, typer.Option("--sandbox", help="docker (default) or local")] = "docker",
    commit: Annotated[
        list[str] | None,
        typer.Option("--commit", help="prove only this commit (repeat); no walk"),
    ] = None,
    runs: Annotated[int, typer.Option("--runs", help="verifications per tree")] = RUNS,
    repo_name: Annotated[
        str | None,
        typer.Option(
            "--repo-name", help="repo: of the drafts (default: github.com/org/name read from REPO)"
        ),
    ] = None,
) -> None:
    """Mine fix commits that change code and tests into draft scenarios.

    Each candidate's tests must fail (or not build) before the fix and pass after it,
    RUNS times each in the verifier, and the old tests keep passing. Drafts take their
    hidden tests from the fix commit (verify.tests-from) and need instructions written."""
    if limit is not None and limit < 1:
        raise UserError("--limit must be at least 1", field="--limit", fix="give N >= 1")
    if runs < 2:
        raise UserError(
            "flaky tests are found by repeating: give --runs 2 or more",
            field="--runs",
            fix="use the default (3)",
        )
    options = MineOptions(
        out=out.resolve(),
        since=since,
        limit=limit,
        sandbox=check_backend(sandbox),
        runs=runs,
        repo_name=repo_name,
        commits=tuple(commit or ()),
    )
    funnel = mine(repo, options, Settings.from_env(), progress=typer.echo)
    counts = funnel.counts()
    typer.echo(" -> ".join(f"{stage} {counts[stage]}" for stage in STAGES))
    typer.echo(f"funnel: {options.out / 'funnel.md'}")
