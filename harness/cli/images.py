"""Typer commands for images and sandboxes: ``images build|ls|prune``, ``sandbox cleanup``.
The main CLI mounts ``images_app`` and ``sandbox_app``.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from docker.errors import APIError, ImageNotFound

from harness.cli.doctor import image_id_of
from harness.errors import HarnessError
from harness.images import graph
from harness.images.build import ImageBuilder
from harness.sandbox.cleanup import find_leftovers, parse_age, remove_leftovers

images_app = typer.Typer(
    help="Build, list and prune the harness Docker images.", no_args_is_help=True
)
sandbox_app = typer.Typer(help="Manage sandboxes (containers and networks).", no_args_is_help=True)


def _fail(exc: HarnessError) -> typer.Exit:
    typer.echo(f"error: {exc.one_line()}", err=True)
    return typer.Exit(exc.exit_code)


@images_app.command("build")
def build_command(
    names: Annotated[
        list[str] | None, typer.Argument(help="Images to build (default: all).")
    ] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show build output.")] = False,
    jobs: Annotated[
        int, typer.Option("--jobs", "-j", min=1, help="Build up to this many images at once.")
    ] = 1,
) -> None:
    """Build images (and their parents) that are missing at their current content tag."""
    try:
        builder = ImageBuilder(
            progress=lambda m: typer.echo(m, err=True),
            log=(lambda m: typer.echo(m, err=True)) if verbose else None,
        )
        wanted = names or graph.list_names(builder.root)
        for ref in builder.ensure_many(wanted, jobs):
            state = "built" if ref.tag in builder.built else "up to date"
            typer.echo(f"{ref.name:<14} {ref.tag:<34} {ref.id[7:19]}  {state}")
    except HarnessError as exc:
        raise _fail(exc) from exc


@images_app.command("ls")
def ls_command() -> None:
    """List every image definition with its current tag and whether it is built."""
    try:
        builder = ImageBuilder()
        for name in graph.list_names(builder.root):
            parent = graph.load(name, builder.root).parent or "(root)"
            tag = builder.current_tag(name)
            image_id = _image_id(builder, tag)
            state = f"{image_id[7:19]}  built" if image_id else "missing"
            typer.echo(f"{name:<14} {parent:<12} {tag or '(parent missing)':<34} {state}")
    except HarnessError as exc:
        raise _fail(exc) from exc


@images_app.command("prune")
def prune_command(
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only list what would go.")] = False,
) -> None:
    """Remove harness images whose tag is no longer any definition's current tag."""
    try:
        builder = ImageBuilder()
        current = {builder.current_tag(n) for n in graph.list_names(builder.root)}
        images = builder.client.images.list(filters={"label": "harness=1"})
        stale = [
            tag
            for image in images
            if image.labels.get("harness.image") != "bootstrap"
            for tag in image.tags
            if tag not in current
        ]
        for tag in sorted(stale):
            if dry_run:
                typer.echo(f"would remove {tag}")
                continue
            try:
                builder.client.images.remove(tag)
                typer.echo(f"removed {tag}")
            except ImageNotFound:
                pass
            except APIError as exc:
                typer.echo(f"kept {tag}: {exc.explanation}", err=True)
    except HarnessError as exc:
        raise _fail(exc) from exc


@sandbox_app.command("cleanup")
def cleanup_command(
    job: Annotated[str | None, typer.Option(help="Only this job's sandboxes.")] = None,
    trial: Annotated[
        str | None,
        typer.Option(help="Only this trial's sandboxes (removed even while it runs)."),
    ] = None,
    older_than: Annotated[
        str | None,
        typer.Option("--older-than", help="Only objects older than this: 90s, 30m, 2h, 7d."),
    ] = None,
    all_projects: Annotated[
        bool,
        typer.Option(
            "--all-projects",
            help="Every harness project's objects on this engine, not only this project's.",
        ),
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Only list what would be removed.")
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Remove without asking.")] = False,
) -> None:
    """List this project's leftover containers, networks and volumes, then remove them
    (asked first; --yes removes at once). A running trial's are kept unless --trial names it."""
    try:
        age = parse_age(older_than) if older_than is not None else None
        items = find_leftovers(job, trial, older_than_s=age, all_projects=all_projects)
    except HarnessError as exc:
        raise _fail(exc) from exc
    removable = [i for i in items if not i.keep]
    for item in removable:
        typer.echo(f"remove  {item.line()}")
    for item in items:
        if item.keep:
            typer.echo(f"keep    {item.line()}: {item.keep}")
    if not removable:
        typer.echo("nothing to remove")
        return
    if dry_run:
        typer.echo(f"dry run: {len(removable)} object(s) would be removed")
        return
    if not yes:
        if not sys.stdin.isatty():
            typer.echo(f"{len(removable)} object(s) listed; pass --yes to remove them")
            return
        if not typer.confirm(f"remove these {len(removable)} object(s)?", default=False):
            typer.echo("nothing removed")
            return
    try:
        removed = remove_leftovers(items)
    except HarnessError as exc:
        raise _fail(exc) from exc
    typer.echo(", ".join(f"{n} {kind}" for kind, n in removed.items()) + " removed")


def _image_id(builder: ImageBuilder, tag: str | None) -> str | None:
    return image_id_of(builder.client, tag) if tag else None
