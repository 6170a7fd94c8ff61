"""``harness run`` (alias ``exec-all``): run a matrix of trials as a resumable job.

The lead wires it into the main app: ``app.command("run")(run_command)`` and
``app.command("exec-all")(run_command)``.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from harness import __version__
from harness.backends import get_backend
from harness.cli.job_options import (
    check_concurrency,
    check_failing_pairs,
    job_config,
    merge_flags,
    split_values,
)
from harness.config.entrants import Registry
from harness.config.project import require_project, require_scenarios
from harness.config.settings import Settings
from harness.errors import EXIT_BAD_INPUT, EXIT_INFRA, EXIT_SUCCESS, HarnessError, UserError
from harness.job.executors.base import Executor, make_executor
from harness.job.jobfile import KEPT_NAME, agent_env, load_job_file
from harness.job.ledger import JobDir, TrialEntry, jobs_root
from harness.job.plan import JobConfig, expand
from harness.job.progress import LiveProgress, Tally
from harness.job.runner import JobOutcome, JobRunner
from harness.scenario.load import load_scenario
from harness.scenario.lock import check_lock
from harness.trial.containment import (
    BudgetCallsOpt,
    BudgetCallTokensOpt,
    BudgetCostOpt,
    BudgetTokensOpt,
    budget_flags,
)
from harness.trial.preflight import preflight_matrix
from harness.util.fs import write_atomic

EXIT_INTERRUPTED = 130


def _check_resume(job: JobDir, config: JobConfig, force: bool) -> None:
    stored = job.read_config()
    if stored is None or stored == config:
        return
    if not force:
        changed = [k for k, v in config.model_dump().items() if stored.model_dump().get(k) != v]
        raise UserError(
            f"job '{job.name}' was started with a different configuration "
            f"(changed: {', '.join(changed)})",
            file=job.config_path,
            field="(job configuration)",
            fix="rerun with the same options, pass --force to replace it, or use another --job",
        )


def run_job(
    config: JobConfig,
    job: JobDir,
    settings: Settings,
    *,
    concurrency: int | None = 1,
    max_interruptions: int = 2,
    force: bool = False,
    console: Console | None = None,
    executor: Executor | None = None,
    job_file: Path | None = None,
    retry_errors: bool = True,
) -> JobOutcome:
    """Expand, record and run ``config`` as ``job``; the programmatic form of ``run``.

    Trials an earlier invocation left as infrastructure errors are run again
    (``retry_errors``), each up to ``1 + max_interruptions`` attempts."""
    console = console or Console()
    registry = Registry.load(require_project(settings))
    root = require_scenarios(settings)
    loaded = [load_scenario(name, root) for name in config.scenarios]
    for scenario in loaded:  # a resumed job's stored scenarios, checked again
        check_lock(scenario, root)
    plan = expand(config, registry)
    for note in plan.skipped:
        console.print(f"skipped {note}", markup=False, highlight=False, soft_wrap=True)
    if not plan.trials:
        raise UserError(
            "the matrix has no trials",
            field="--agents/--models",
            fix="pick models the agents support (agents.yml supports-llms)",
        )
    preflight_matrix(  # the machine can run it: before the job folder is made
        [(t.agent, t.model) for t in plan.trials],
        loaded,
        registry,
        get_backend(config.sandbox),
        settings,
        Path(config.replay) if config.replay else None,
    )
    with job.exclusive():
        _check_resume(job, config, force)
        job.write_config(config, __version__)
        if job_file is not None:  # the job as written, kept beside what it expanded to
            write_atomic(job.path / KEPT_NAME, job_file.read_text())
        tally = Tally(total=len(plan.trials))
        progress = LiveProgress(tally, console)
        runner = JobRunner(
            job,
            config,
            plan.trials,
            settings,
            concurrency=concurrency,
            max_interruptions=max_interruptions,
            progress=progress,
            executor=executor,
            retry_errors=retry_errors,
        )
        todo, entries = runner.prepare()
        tally.done = len(plan.trials) - len(todo)
        tally.errors, tally.failed = runner.errors, runner.failed
        outcome = JobOutcome(total=len(plan.trials), already_done=tally.done)
        outcome.retried = list(runner.retried)
        if todo or runner.errors:  # else the job is complete (entries not even read)
            outcome.final = {e.key: e.status for e in entries}
        console.print(
            f"job {job.name}: {len(plan.trials)} trials, {tally.done} already complete, "
            f"{len(todo)} to run ({job.path})",
            markup=False,
            soft_wrap=True,
            highlight=False,
        )
        if runner.retried:
            shown = ", ".join(runner.retried[:5])
            more = f" (+{len(runner.retried) - 5} more)" if len(runner.retried) > 5 else ""
            console.print(
                f"retrying {len(runner.retried)} trial(s) that ended in an infrastructure "
                f"error (--no-retry-errors leaves them): {shown}{more}",
                markup=False,
                soft_wrap=True,
                highlight=False,
            )
        elif runner.errors:
            console.print(
                f"{runner.errors} trial(s) left as infrastructure errors (--no-retry-errors)",
                markup=False,
                soft_wrap=True,
                highlight=False,
            )
        with progress:
            runner.run(todo, outcome)
        return outcome


def _job_counts(job: JobDir) -> tuple[int, str]:
    """Every trial of the job the ledger records, by outcome (or status when it has none):
    what a resumed job's last line counts, not only this invocation's trials."""
    counts: Counter[str] = Counter()
    for path in sorted(job.trials_dir.glob("*.json")):
        if path.name.endswith((".spec.json", ".out.json")):  # a worker's files, not entries
            continue
        try:
            entry = TrialEntry.model_validate_json(path.read_text())
        except (OSError, ValueError):
            continue
        counts[entry.outcome or entry.status] += 1
    text = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    return sum(counts.values()), text


def _retry_lines(outcome: JobOutcome) -> list[str]:
    """What the retry of earlier errors came to, and the errors the job still has."""
    lines = []
    if outcome.retried:
        recovered = outcome.recovered()
        lines.append(
            f"retried {len(outcome.retried)} earlier infrastructure error(s): "
            f"{len(recovered)} recovered, {len(outcome.retried) - len(recovered)} not"
        )
    if outcome.errors_left:
        lines.append(
            f"{outcome.errors_left} trial(s) of this job are infrastructure errors; fix the "
            "cause (the job's ledger names it) and run the same command again"
        )
    return lines


def run_command(
    agents: Annotated[
        list[str] | None, typer.Option("--agents", help="agent names, comma separated")
    ] = None,
    models: Annotated[
        list[str] | None,
        typer.Option("--models", help="model names, comma separated; default: each agent's first"),
    ] = None,
    scenarios: Annotated[
        list[str] | None,
        typer.Option("--scenarios", help="scenario names or globs ('py/*'), comma separated"),
    ] = None,
    all_: Annotated[bool, typer.Option("--all", help="every non-smoke scenario")] = False,
    exclude: Annotated[
        list[str] | None,
        typer.Option("--exclude", help="scenario globs to leave out, comma separated"),
    ] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", help="only the first N scenarios (after --exclude)")
    ] = None,
    reps: Annotated[int, typer.Option("--reps", help="repetitions per seed")] = 1,
    seeds: Annotated[
        list[str] | None,
        typer.Option(
            "--seeds", help="16-hex seeds, comma separated; default: a fresh seed per trial"
        ),
    ] = None,
    concurrency: Annotated[
        int | None,
        typer.Option(
            "--concurrency",
            help="trials at once; default 1, with --executor ray the cluster's docker slots",
        ),
    ] = None,
    sandbox: Annotated[str, typer.Option("--sandbox", help="docker (default) or local")] = "docker",
    job: Annotated[
        str | None, typer.Option("--job", help="job name; default: derived from the matrix")
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="replace a job's changed configuration")
    ] = False,
    max_interruptions: Annotated[
        int,
        typer.Option(
            "--max-interruptions",
            help="retries per trial and invocation after infrastructure errors",
        ),
    ] = 2,
    retry_errors: Annotated[
        bool,
        typer.Option(
            "--retry-errors/--no-retry-errors",
            help="run again the trials an earlier run left as infrastructure errors",
        ),
    ] = True,
    executor: Annotated[
        str,
        typer.Option(
            "--executor", help="where trials run: local (processes here) or ray (a Ray cluster)"
        ),
    ] = "local",
    address: Annotated[
        str | None,
        typer.Option("--address", help="the Ray cluster's head, HOST:PORT (default: $RAY_ADDRESS)"),
    ] = None,
    router_host: Annotated[
        str | None,
        typer.Option(
            "--router-host",
            help="address the job's shared router binds; every node's trials must reach it "
            "(default: the Docker bridge locally, this machine's cluster address with ray)",
        ),
    ] = None,
    budget_tokens: BudgetTokensOpt = None,
    budget_cost_usd: BudgetCostOpt = None,
    budget_calls: BudgetCallsOpt = None,
    budget_call_tokens: BudgetCallTokensOpt = None,
    replay: Annotated[
        Path | None,
        typer.Option(
            "--replay",
            help="a cassette every trial's gateway serves instead of the fleet "
            "(with --models replay)",
        ),
    ] = None,
    allow_failing_pairs: Annotated[
        bool,
        typer.Option(
            "--allow-failing-pairs",
            help="run agent x model pairs `harness fleet check` found to fail",
        ),
    ] = False,
    agent_env_: Annotated[
        list[str] | None,
        typer.Option(
            "--agent-env", help="KEY=VALUE in the agent's environment (repeatable; in run.json)"
        ),
    ] = None,
    agent_arg: Annotated[
        list[str] | None,
        typer.Option("--agent-arg", help="an argument added to the agent's command (repeatable)"),
    ] = None,
    config_file: Annotated[
        Path | None,
        typer.Option("-c", "--config", help="a job file (YAML) with the flags' fields; flags win"),
    ] = None,
) -> None:
    """Run a matrix of trials as a job; running it again resumes where it stopped.

    Exit 0 when every trial has a result, 2 bad input (or a refused trial),
    3 when some trial ended in an infrastructure error, 130 when interrupted.
    """
    console = Console()
    try:
        file = load_job_file(config_file) if config_file is not None else None
        flags: dict[str, Any] = {
            "agents": split_values(agents), "models": split_values(models),
            "scenarios": split_values(scenarios), "all_": all_,
            "exclude": split_values(exclude), "limit": limit, "reps": reps,
            "seeds": split_values(seeds), "concurrency": concurrency, "sandbox": sandbox,
            "job": job, "max_interruptions": max_interruptions, "executor": executor,
            "address": address, "router_host": router_host, "budget_tokens": budget_tokens,
            "budget_cost_usd": budget_cost_usd, "budget_calls": budget_calls,
            "budget_call_tokens": budget_call_tokens,
            "replay": replay, "agent_env": agent_env_ or [], "agent_arg": agent_arg or [],
            "retry_errors": retry_errors,
        }  # fmt: skip
        check_concurrency(concurrency, "--concurrency")  # before pydantic: one line naming the flag
        if limit is not None and limit < 1:
            raise UserError("--limit must be at least 1", field="--limit", fix="e.g. --limit 5")
        o = merge_flags(file, flags)
        settings = Settings.from_env()
        root = jobs_root(settings)
        if o.job is not None and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", o.job):
            raise UserError(
                f"'{o.job}' is not a usable job name",
                field="--job",
                fix="letters, digits, '.', '_' and '-'",
            )
        named = JobDir(root / o.job) if o.job else None
        config = job_config(
            named,
            o.agents,
            o.models,
            o.scenarios,
            o.all_,
            o.reps,
            o.seeds,
            o.sandbox,
            settings,
            budget_flags(o.budget_tokens, o.budget_cost_usd, o.budget_calls, o.budget_call_tokens),
            o.replay,
            o.exclude,
            o.limit,
            agent_env(o.agent_env),
            o.agent_arg,
        )
        check_failing_pairs(config, settings, allow_failing_pairs)
        job_dir = named or JobDir(root / f"job-{config.fingerprint()}")
        where = make_executor(o.executor, settings, address=o.address, router_host=o.router_host)
        outcome = run_job(
            config,
            job_dir,
            settings,
            concurrency=o.concurrency,
            max_interruptions=o.max_interruptions,
            force=force,
            console=console,
            executor=where,
            job_file=config_file,
            retry_errors=o.retry_errors,
        )
    except HarnessError as exc:
        typer.echo(f"harness: {exc.one_line()}", err=True)
        raise typer.Exit(exc.exit_code) from None
    except KeyboardInterrupt:
        typer.echo("harness: interrupted; run the same command again to resume", err=True)
        raise typer.Exit(EXIT_INTERRUPTED) from None
    this_run = ", ".join(f"{k} {v}" for k, v in sorted(outcome.outcomes.items())) or "nothing new"
    total, counts = _job_counts(job_dir)
    console.print(
        f"job {job_dir.name} finished: {total} trial(s): {counts or 'none recorded'} "
        f"(this run: {this_run})",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    for line in _retry_lines(outcome):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    if outcome.statuses.get("refused"):
        raise typer.Exit(EXIT_BAD_INPUT)
    if outcome.statuses.get("error") or outcome.errors_left:
        raise typer.Exit(EXIT_INFRA)
    raise typer.Exit(EXIT_SUCCESS)
