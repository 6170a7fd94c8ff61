"""Preflight: what a run needs from this machine, checked once before anything is written.

``harness exec`` and ``harness run`` call ``preflight`` after the input is read and before
a workspace, a run folder or a job folder exists, so a machine that cannot run the trials
says so in one line and leaves nothing behind: the backend's engine (Docker, named by the
socket or ``DOCKER_HOST`` it tried), the agent's program where the agent runs on the host
(with the line that installs it), the free space of the results root, and every
scenario's repository (in the cache, or a host name that resolves). A failure is a
``UserError`` (exit 2) when the user's input is to blame and an ``InfraError`` (exit 3)
when the machine is; ``harness doctor`` lists the same repositories.
"""

from __future__ import annotations

import shutil
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from harness.agents import Agent, get_agent
from harness.agents.common import install_line
from harness.backends import Backend
from harness.config.entrants import NO_MODEL, Registry
from harness.config.settings import Settings, read_env
from harness.errors import InfraError, UserError
from harness.scenario.model import LoadedScenario
from harness.scenario.repo import cached_mirror, remote_source, resolve_source
from harness.trial.entrant import RunOptions, model_access, refuse_failing_pair

MIN_FREE_MB = 256  # a trial writes a few MB; less than this fills up mid-trial
CACHE_RECIPE = (
    "mirror it into $HARNESS_REPO_CACHE/<host>/<org>/<name>.git "
    "(git clone --mirror URL; scenarios/README.md has the recipe) and set HARNESS_REPO_CACHE"
)


def preflight(
    scenarios: Iterable[LoadedScenario],
    agents: Iterable[Agent],
    backend: Backend,
    settings: Settings,
) -> None:
    """Every check, cheapest first; the first that fails raises (one line)."""
    check_free_space(settings.results)
    check_engine(backend)
    for agent in agents:
        check_agent_program(agent, backend)
    check_repos(list(scenarios), settings)


def preflight_trial(
    loaded: LoadedScenario,
    registry: Registry,
    opts: RunOptions,
    backend: Backend,
    settings: Settings,
) -> None:
    """``preflight`` for one trial, after the checks of its input (a replay model without
    a cassette is the user's mistake, said first)."""
    entry, llm = registry.resolve(opts.agent, opts.model)
    if llm.name != NO_MODEL and opts.replay is None:  # `harness fleet check` found it fails
        refuse_failing_pair(settings, entry.name, llm.name, opts.allow_failing_pairs)
    model_access(llm, opts, settings)
    preflight([loaded], [get_agent(opts.agent, entry.adapter)], backend, settings)


def preflight_matrix(
    pairs: Iterable[tuple[str, str]],
    scenarios: Iterable[LoadedScenario],
    registry: Registry,
    backend: Backend,
    settings: Settings,
    replay: Path | None = None,
) -> None:
    """``preflight`` for a job's (agent, model) pairs over its scenarios, once."""
    pairs = sorted(set(pairs))
    for agent, model in pairs:
        opts = RunOptions(agent=agent, model=model, sandbox=backend.name, replay=replay)
        model_access(registry.resolve(agent, model)[1], opts, settings)  # (gguf:PATH too)
    names = sorted({agent for agent, _ in pairs})
    agents = [get_agent(name, registry.agent(name).adapter) for name in names]
    preflight(scenarios, agents, backend, settings)


def check_engine(backend: Backend) -> None:
    """The backend's engine answers (a backend without an engine has no ``preflight``)."""
    probe = getattr(backend, "preflight", None)
    if callable(probe):
        probe()


def check_agent_program(agent: Agent, backend: Backend) -> None:
    """An agent CLI that runs on the host must be installed here: the machine's fault
    (exit 3, never the agent's ``failed``), with the line that installs it."""
    argv = getattr(agent, "version_argv", None)
    if not backend.on_host or not argv:
        return
    program = str(argv[0])
    if shutil.which(program) is None:
        image = str(getattr(agent, "image_name", f"agent-{agent.name}"))
        raise InfraError(
            f"agent program not found: `{program}` ({agent.name}) is not installed on this "
            f"machine, and --sandbox {backend.name} runs it here",
            field="--sandbox",
            fix=f"{install_line(image)}, or use --sandbox docker",
        )


def free_mb(path: Path) -> float:
    """Free space (MiB) where ``path`` is or would be made."""
    probe = path
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    return shutil.disk_usage(probe).free / 2**20


def min_free_mb() -> float:
    """``HARNESS_MIN_FREE_MB`` or ``MIN_FREE_MB``."""
    value = read_env("HARNESS_MIN_FREE_MB")
    try:
        return float(value) if value else MIN_FREE_MB
    except ValueError:
        raise UserError(
            f"'{value}' is not a number of MiB", field="HARNESS_MIN_FREE_MB", fix="e.g. 256"
        ) from None


def check_free_space(results: Path) -> None:
    need, free = min_free_mb(), free_mb(results)
    if free < need:
        raise InfraError(
            f"the results root has {free:.0f} MiB free, a run needs {need:.0f}",
            file=results,
            field="free space",
            fix="free some space (harness images prune; old results), or point "
            "HARNESS_RESULTS elsewhere",
        )


@dataclass(frozen=True)
class RepoProblem:
    """A scenario whose repository is neither cached nor reachable."""

    scenario: str
    repo: str
    why: str


def repo_problems(scenarios: Iterable[LoadedScenario], settings: Settings) -> list[RepoProblem]:
    """Scenarios whose remote repository is not in the cache and cannot be fetched here
    (remote access off, or a host name that does not resolve). Bundles and paths are
    checked when the scenario loads."""
    problems: list[RepoProblem] = []
    resolved: dict[str, str | None] = {}
    for loaded in scenarios:
        repo = loaded.scenario.repo.strip()
        source = remote_source(repo, loaded.directory)
        if source is None or cached_mirror(source, settings.repo_cache) is not None:
            continue
        if settings.skip_remote:
            problems.append(RepoProblem(loaded.name, repo, "not cached; HARNESS_SKIP_REMOTE"))
            continue
        host = _host(source.location)
        if host not in resolved:
            resolved[host] = _resolve(host)
        if resolved[host] is not None:
            problems.append(RepoProblem(loaded.name, repo, f"not cached; {resolved[host]}"))
    return problems


def _host(location: str) -> str:
    if "://" in location:
        return urlsplit(location).hostname or location
    return location.split("@", 1)[-1].split(":", 1)[0]  # git@host:org/name


def _resolve(host: str) -> str | None:
    """Why ``host`` cannot be reached by name, or None when it resolves."""
    try:
        socket.getaddrinfo(host, 443, type=socket.SOCK_STREAM)
    except OSError as exc:
        return f"cannot resolve {host}: {exc.strerror or exc}"
    return None


def check_repos(scenarios: list[LoadedScenario], settings: Settings) -> None:
    """Each scenario's repository can be had: a bundle or path exists (else the user's
    mistake, exit 2), a remote one is cached or its host resolves (else exit 3)."""
    for loaded in scenarios:
        if remote_source(loaded.scenario.repo.strip(), loaded.directory) is None:
            resolve_source(loaded)  # a missing bundle or path: one line, exit 2
    problems = repo_problems(scenarios, settings)
    if not problems:
        return
    first = problems[0]
    more = f" (and {len(problems) - 1} more; `harness doctor` lists them)" if problems[1:] else ""
    error = UserError if settings.skip_remote else InfraError  # remote access turned off
    raise error(
        f"{first.scenario}: repository {first.repo} cannot be cloned: {first.why}{more}",
        field="repo",
        fix=CACHE_RECIPE,
    )
