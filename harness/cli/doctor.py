"""``harness doctor``: what the harness needs and is missing (the project, Docker, the base
image, disk, chromium, go, git, a Ray cluster), each with the command that fixes it.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import docker
import typer
from docker.errors import DockerException, ImageNotFound

from harness.config.project import FIX, _lookup
from harness.config.root import MARKER
from harness.config.settings import Settings
from harness.errors import HarnessError, InfraError, UserError
from harness.images import bootstrap
from harness.images.build import ImageBuilder
from harness.sandbox.engine import START_HINT, docker_client
from harness.trial.preflight import CACHE_RECIPE, free_mb, min_free_mb, repo_problems

MIN_FREE_GIB = 10.0
CHROMIUM = Path("/usr/bin/chromium")


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

    checks = project_checks(Settings.from_env())
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
            ok = bool(tag and image_id_of(client, tag))
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
    settings = Settings.from_env()
    results_free, results_need = free_mb(settings.results), min_free_mb()
    checks.append(
        Check(
            "results disk",
            results_free >= results_need,
            f"{results_free:.0f} MiB free at {settings.results} (a run needs {results_need:.0f})",
            "free some space or point HARNESS_RESULTS elsewhere",
        )
    )
    checks.extend(repo_checks(settings))
    checks.append(
        Check("chromium", CHROMIUM.is_file(), str(CHROMIUM), "apt-get install -y chromium")
    )
    found = shutil.which("git")
    checks.append(Check("git", bool(found), found or "not on PATH", "apt-get install -y git"))
    from harness.cli.toolcheck import fleet_check, go_checks  # against what scenarios need

    checks += [Check(c.name, c.ok, c.detail, c.fix) for c in go_checks(settings)]
    fleet = fleet_check(settings)
    checks.append(Check(fleet.name, fleet.ok, fleet.detail, fleet.fix))
    checks.extend(_cluster_checks(ray_address))
    return checks


def repo_checks(settings: Settings) -> list[Check]:
    """Every scenario's repository: cached or reachable; one line per one that is not."""
    if not settings.project_found:
        return []
    from harness.scenario.load import list_scenarios, load_scenario

    loaded = []
    for name in list_scenarios(settings.scenario_root):
        try:
            loaded.append(load_scenario(name, settings.scenario_root))
        except HarnessError:
            continue  # `harness validate` names what is wrong with it
    problems = repo_problems(loaded, settings)
    if not problems:
        where = settings.repo_cache or "no HARNESS_REPO_CACHE"
        return [Check("repositories", True, f"{len(loaded)} scenarios can clone ({where})")]
    head = Check(
        "repositories",
        False,
        f"{len(problems)} of {len(loaded)} scenarios cannot clone their repository",
        CACHE_RECIPE,
    )
    return [head] + [Check(f"repo {p.scenario}", False, f"{p.repo}: {p.why}") for p in problems]


def _cluster_checks(address: str | None) -> list[Check]:
    from harness.job.executors import ray as ray_executor

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


def project_checks(settings: Settings) -> list[Check]:
    """What ``harness doctor`` says about the project: root, registries, scenarios."""
    if not settings.project_found:
        lookup = _lookup(settings)
        return [Check("project root", False, f"no {MARKER} in {lookup.where()}", FIX)]
    root = settings.project_root
    checks = [Check("project root", True, str(root))]
    try:
        from harness.config.entrants import Registry

        reg = Registry.load(root)
        checks.append(Check("agents/llms", True, f"{len(reg.agents)} agents, {len(reg.llms)} llms"))
    except UserError as exc:
        checks.append(Check("agents/llms", False, exc.one_line()[:160], "fix that file"))
    from harness.scenario.load import list_scenarios

    names = list_scenarios(settings.scenario_root)
    checks.append(
        Check(
            "scenarios",
            bool(names),
            f"{len(names)} under {settings.scenario_root}",
            "set HARNESS_SCENARIO_ROOT or add scenarios/<family>/<name>/scenario.yml",
        )
    )
    return checks


def image_id_of(client: docker.DockerClient, tag: str) -> str | None:
    try:
        return str(client.images.get(tag).id)
    except ImageNotFound:
        return None
