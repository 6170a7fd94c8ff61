"""Typer commands for images and sandboxes: ``images build|ls|prune``, ``sandbox cleanup``,
and ``doctor``. The main CLI mounts ``images_app`` and ``sandbox_app`` and registers
``doctor_command``.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import docker
import typer
from docker.errors import APIError, DockerException, ImageNotFound

from harness.errors import HarnessError, InfraError
from harness.images import bootstrap, graph
from harness.images.build import ImageBuilder
from harness.project import project_checks
from harness.sandbox.cleanup import cleanup
from harness.sandbox.engine import START_HINT, docker_client
from harness.settings import Settings

images_app = typer.Typer(
    help="Build, list and prune the harness Docker images.", no_args_is_help=True
)
sandbox_app = typer.Typer(help="Manage sandboxes (containers and networks).", no_args_is_help=True)

MIN_FREE_GIB = 10.0
CHROMIUM = Path("/usr/bin/chromium")


def _fail(exc: HarnessError) -> typer.Exit:
    typer.echo(f"error: {exc.one_line()}", err=True)
    return typer.Exit(exc.exit_code)


@images_app.command("build")
def build_command(
    names: Annotated[
        list[str] | None, typer.Argument(help="Images to build (default: all).")
    ] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show build output.")] = False,
) -> None:
    """Build images (and their parents) that are missing at their current content tag."""
    try:
        builder = ImageBuilder(
            progress=lambda m: typer.echo(m, err=True),
            log=(lambda m: typer.echo(m, err=True)) if verbose else None,
        )
        for name in names or graph.list_names(builder.root):
            ref = builder.ensure(name)
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
    trial: Annotated[str | None, typer.Option(help="Only this trial's sandboxes.")] = None,
) -> None:
    """Remove containers, networks and volumes labelled harness=1 (e.g. after a crash)."""
    try:
        removed = cleanup(job=job, trial=trial)
    except HarnessError as exc:
        raise _fail(exc) from exc
    typer.echo(", ".join(f"{n} {kind}" for kind, n in removed.items()) + " removed")


@dataclass(frozen=True)
class Check:
    """One doctor finding: what, whether it is fine, details, and the command that fixes it."""

    name: str
    ok: bool
    detail: str
    fix: str = ""


def doctor_checks(ray_address: str | None = None) -> list[Check]:
    """Everything the docker sandbox and the scorer need, checked without changing anything;
    with a Ray cluster address (or ``RAY_ADDRESS``), the cluster too."""

    checks = [Check(c.name, c.ok, c.detail, c.fix) for c in project_checks(Settings.from_env())]
    client = None
    try:
        client = docker_client(timeout=10)
        checks.append(Check("docker engine", True, f"server {client.version().get('Version')}"))
    except InfraError as exc:
        fix = "apt-get install -y docker.io && " if shutil.which("dockerd") is None else ""
        checks.append(Check("docker engine", False, exc.message[:120], fix + START_HINT))
    if client is not None:
        try:
            tag = ImageBuilder(client).current_tag("base")
            ok = bool(tag and _image_id_of(client, tag))
            checks.append(
                Check("base image", ok, tag or "no root image yet", "harness images build base")
            )
        except (HarnessError, DockerException) as exc:
            checks.append(Check("base image", False, str(exc)[:120], "harness images build base"))
        if bootstrap.find_root(client) is None and shutil.which("debootstrap") is None:
            checks.append(
                Check(
                    "debootstrap",
                    False,
                    "needed to build the base offline",
                    "apt-get install -y debootstrap",
                )
            )
    where = Path("/var/lib/docker")
    where = where if where.exists() else Path.home()
    free = shutil.disk_usage(where).free / 2**30
    checks.append(
        Check(
            "free disk",
            free >= MIN_FREE_GIB,
            f"{free:.1f} GiB free at {where}",
            "harness images prune && docker system prune",
        )
    )
    checks.append(
        Check("chromium", CHROMIUM.is_file(), str(CHROMIUM), "apt-get install -y chromium")
    )
    found = shutil.which("git")
    checks.append(Check("git", bool(found), found or "not on PATH", "apt-get install -y git"))
    from harness.toolcheck import fleet_check, go_checks  # against what scenarios need

    settings = Settings.from_env()
    checks += [Check(c.name, c.ok, c.detail, c.fix) for c in go_checks(settings)]
    fleet = fleet_check(settings)
    checks.append(Check(fleet.name, fleet.ok, fleet.detail, fleet.fix))
    checks.extend(_cluster_checks(ray_address))
    return checks


def _cluster_checks(address: str | None) -> list[Check]:
    from harness.job import ray_executor

    address = address or ray_executor.ray_address()
    if not address:
        return []
    ok, detail, fix = ray_executor.cluster_report(address)
    return [Check("ray cluster", ok, detail, fix)]


def doctor_command(
    address: Annotated[
        str | None,
        typer.Option("--address", help="also check this Ray cluster (default: $RAY_ADDRESS)"),
    ] = None,
) -> None:
    """Report what the harness needs and is missing, each with the command that fixes it."""
    checks = doctor_checks(address)
    for check in checks:
        mark = "ok  " if check.ok else "MISS"
        line = f"{mark} {check.name:<14} {check.detail}"
        if not check.ok and check.fix:
            line += f"  -> fix: {check.fix}"
        typer.echo(line)
    if not all(c.ok for c in checks):
        raise typer.Exit(1)


def _image_id(builder: ImageBuilder, tag: str | None) -> str | None:
    return _image_id_of(builder.client, tag) if tag else None


def _image_id_of(client: docker.DockerClient, tag: str) -> str | None:
    try:
        return str(client.images.get(tag).id)
    except ImageNotFound:
        return None
