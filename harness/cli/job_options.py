"""``harness run``'s flags (over a job file) checked and turned into a ``JobConfig``:
scenario names and globs, seeds, the cassette, concurrency, pairs known to fail."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from harness.backends import check_backend
from harness.config.budget import Budget
from harness.config.project import require_scenarios
from harness.config.settings import Settings
from harness.errors import UserError
from harness.job.jobfile import JobFile
from harness.job.ledger import JobDir
from harness.job.plan import JobConfig, select_scenarios
from harness.scenario.load import list_scenarios, load_scenario
from harness.scenario.lock import check_lock
from harness.util.strict_yaml import kebab


def split_values(values: list[str] | None) -> list[str]:
    """``--agents a,b --agents c`` -> ``[a, b, c]`` (order kept, duplicates dropped)."""
    out: list[str] = []
    for value in values or []:
        for part in value.split(","):
            if part.strip() and part.strip() not in out:
                out.append(part.strip())
    return out


def pick_scenarios(
    names: list[str],
    all_: bool,
    settings: Settings,
    exclude: list[str] | None = None,
    limit: int | None = None,
) -> list[str]:
    root = require_scenarios(settings)
    if names and all_:
        raise UserError("--scenarios and --all both given", field="--all", fix="use one of them")
    if not names and not all_:
        raise UserError(
            "no scenarios to run",
            file=settings.scenario_root,
            field="--scenarios",
            fix="pass --scenarios a,b (or globs, e.g. 'py/*') or --all (every non-smoke scenario)",
        )
    picked = select_scenarios(
        names, list_scenarios(root), all_=all_, exclude=exclude or [], limit=limit
    )
    for name in picked:
        check_lock(load_scenario(name, root), root)  # a bad name fails before anything runs
    return picked


def check_seeds(values: list[str]) -> list[str] | None:
    for value in values:
        if not re.fullmatch(r"[0-9a-fA-F]{16}", value):
            raise UserError(
                f"'{value}' is not 16 hex digits",
                field="--seeds",
                fix="e.g. --seeds 00c0ffee00c0ffee,0000000000000001",
            )
    return [v.lower() for v in values] or None


def job_config(
    job: JobDir | None,
    agents: list[str],
    models: list[str],
    scenarios: list[str],
    all_: bool,
    reps: int,
    seeds: list[str],
    sandbox: str,
    settings: Settings,
    budget: Budget | None = None,
    replay: Path | None = None,
    exclude: list[str] | None = None,
    limit: int | None = None,
    agent_env: dict[str, str] | None = None,
    agent_args: list[str] | None = None,
) -> JobConfig:
    if not agents:
        stored = job.read_config() if job else None
        if stored is None:
            raise UserError("no agents given", field="--agents", fix="e.g. --agents oracle,nop")
        return stored  # `harness run --job NAME` resumes with the stored matrix
    check_backend(sandbox)
    return JobConfig(
        agents=agents,
        models=models or None,
        scenarios=pick_scenarios(scenarios, all_, settings, exclude, limit),
        reps=reps,
        seeds=check_seeds(seeds),
        sandbox=sandbox,
        budget=budget,
        replay=str(check_cassette(replay)) if replay else None,
        agent_env=agent_env or None,
        agent_args=agent_args or None,
    )


def check_failing_pairs(config: JobConfig, settings: Settings, allow: bool) -> None:
    """Refuse the job up front when a pair of it is known to fail (``harness fleet check``);
    with ``--allow-failing-pairs`` its trial workers are told to run such pairs."""
    from harness.config.entrants import NO_MODEL, Registry
    from harness.trial.entrant import ALLOW_FAILING_ENV, refuse_failing_pair

    if allow:
        os.environ.update({ALLOW_FAILING_ENV: "1"})  # for the job's trial workers (a write)
        return
    if config.replay:
        return
    registry = Registry.load(settings.project_root)
    for agent in config.agents:
        for model in config.models or registry.agent(agent).supports_llms[:1]:
            if model != NO_MODEL:
                refuse_failing_pair(settings, agent, model, allow)


def check_cassette(path: Path) -> Path:
    if not path.is_file():
        raise UserError(
            "cassette not found",
            file=path,
            field="--replay",
            fix="give a recorded cassette, e.g. tests/cassettes/mini-py-fast-solve.jsonl",
        )
    return path.resolve()


def merge_flags(file: JobFile | None, flags: dict[str, Any]) -> JobFile:
    """The flags over the job file: a flag left at its default takes the file's value."""
    try:
        given = JobFile.model_validate(flags)
    except ValidationError as err:
        first = err.errors()[0]
        flag = "--" + kebab(str(first["loc"][0])) if first["loc"] else "(flags)"
        raise UserError(str(first["msg"]), field=flag, fix="see `harness run --help`") from None
    if file is None:
        return given
    defaults = JobFile()
    changed = {k: v for k, v in given if v != getattr(defaults, k)}
    return file.model_copy(update=changed)


def check_concurrency(value: int | None, source: str) -> int | None:
    if value is not None and value < 1:
        raise UserError(
            f"{value} trials at once runs nothing",
            field=source,
            fix="give 1 or more trials at once, e.g. --concurrency 2 (default 1)",
        )
    return value
