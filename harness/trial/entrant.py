"""Who a trial's entrant is: the agent + model, resolved and checked before anything is written.

``RunOptions`` is what the CLI or a job asks for; ``resolve_entrant`` turns it into an
``Entrant`` (the adapter, its pinned version, the model and the fleet file its calls
route through), refusing with a ``UserError`` whatever cannot run.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.agents import Agent, get_agent
from harness.agents.builtin import reference_solution
from harness.backends import Backend, get_backend
from harness.config.budget import Budget
from harness.config.entrants import NO_MODEL, LLMEntry, Registry
from harness.config.settings import Settings
from harness.errors import UserError
from harness.scenario.model import LoadedScenario

REPLAY = "replay"  # llms.yml's cassette model: served by --replay only


@dataclass(frozen=True)
class RunOptions:
    agent: str
    model: str | None = None
    seed: str | None = None
    sandbox: str = "docker"  # a backend name (harness.backends)
    job: str | None = None
    replay: Path | None = None  # a cassette the gateway serves instead of the fleet
    record: bool = False  # keep the gateway's request/response recording in the run
    trial_key: str | None = None  # the job's name for this trial (resume matches on it)
    repetition: int = 0
    budget: Budget | None = None  # --budget-* limits over the scenario's
    allow_failing_pairs: bool = False  # run a pair `harness fleet check` found to fail
    agent_env: dict[str, str] | None = None  # --agent-env: extra environment for the agent
    agent_args: tuple[str, ...] = ()  # --agent-arg: extra arguments for the agent's CLI


SECRET_NAME = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASS", "AUTH")


def agent_extras(opts: RunOptions) -> dict[str, Any]:
    """What run.json records of ``--agent-env`` and ``--agent-arg`` (a value whose name
    says it is a secret is recorded as ``***``); empty when neither was given."""
    out: dict[str, Any] = {}
    if opts.agent_env:
        out["agent_env"] = {
            k: "***" if any(w in k.upper() for w in SECRET_NAME) else v
            for k, v in opts.agent_env.items()
        }
    if opts.agent_args:
        out["agent_args"] = list(opts.agent_args)
    return out


@dataclass(frozen=True)
class Entrant:
    """The agent + model of a trial, resolved and checked once: the adapter, its pinned
    and self-reported version, the model, and the fleet file its calls route through."""

    agent: Agent
    name: str
    version: str
    llm: LLMEntry
    fleet_file: Path | None


def resolve_entrant(
    loaded: LoadedScenario,
    settings: Settings,
    registry: Registry,
    opts: RunOptions,
    backend: Backend | None = None,
) -> Entrant:
    """Every check on the entrant that can refuse a run, before anything is written."""
    backend = backend or get_backend(opts.sandbox)
    entry, llm = registry.resolve(opts.agent, opts.model)
    agent = get_agent(opts.agent, entry.adapter)
    reported = backend.agent_version(agent)
    if reported != entry.version:
        raise UserError(
            f"agent '{opts.agent}' reports version {reported} but is pinned to {entry.version}",
            file=registry.agents_path,
            field=f"agents.{opts.agent}.version",
            fix=f"install {opts.agent} {entry.version} or change the pin to {reported}",
        )
    if opts.agent == "oracle":
        reference_solution(loaded, "use --agent oracle")
    if llm.name != NO_MODEL and opts.replay is None:
        refuse_failing_pair(settings, entry.name, llm.name, opts.allow_failing_pairs)
    fleet_file = model_access(llm, opts, settings)
    if opts.replay is not None and llm.name != NO_MODEL:
        from harness.fleet.cassette import check_model

        check_model(opts.replay, llm.id_for(entry.name))  # another model's cassette: exit 2
    return Entrant(agent, entry.name, reported, llm, fleet_file)


ALLOW_FAILING_ENV = "HARNESS_ALLOW_FAILING_PAIRS"  # set by `harness run --allow-failing-pairs`


def refuse_failing_pair(settings: Settings, agent: str, model: str, allow: bool) -> None:
    """A pair ``harness fleet check`` found to fail is refused before anything is written,
    unless told otherwise (``--allow-failing-pairs``)."""
    from harness.config.settings import read_env
    from harness.gateway.check import CHECK_FILE, known_failing

    if allow or read_env(ALLOW_FAILING_ENV) == "1":
        return
    path = settings.fleet_file.parent / CHECK_FILE
    found = known_failing(path, agent, model)
    if found is not None:
        why = "; ".join(found.reasons)[:300] or "see the check"
        raise UserError(
            f"`harness fleet check` found {agent} + {model} fails: {why}",
            file=path,
            field=f"{agent} x {model}",
            fix="pick another pair, or pass --allow-failing-pairs to run it anyway",
        )


def model_access(llm: LLMEntry, opts: RunOptions, settings: Settings) -> Path | None:
    """The fleet file a model-using trial will route through (checked before any write)."""
    if llm.name == NO_MODEL:
        return None
    if opts.replay is None and REPLAY in (llm.name, llm.model):
        raise UserError(
            f"model '{llm.name}' only replays a recorded cassette, and none was given",
            field="--replay",
            fix="pass --replay CASSETTE (e.g. tests/cassettes/mini-py-fast-solve.jsonl), "
            "or a model the fleet serves",
        )
    if opts.replay is not None:
        if not opts.replay.is_file():
            raise UserError(
                "cassette not found",
                file=opts.replay,
                field="--replay",
                fix="give the path of a recorded cassette (JSONL)",
            )
        return None
    if llm.engine is not None:  # served by an engine harness starts (the built-in fleet)
        from harness.fleet.builtin import engine_fleet_file

        return engine_fleet_file(llm.name, llm.engine)
    fleet = settings.fleet_file
    if not fleet.is_file():
        raise UserError(
            f"model '{llm.name}' needs the fleet, and there is no fleet file",
            file=fleet,
            field="hosts",
            fix="copy fleet.yml.example to fleet.yml, pass --model smollm2-135m (the "
            "built-in engine) or --replay CASSETTE",
        )
    from harness.fleet.builtin import materialize  # starts any `kind: engine` host

    return materialize(fleet)


def fleet_fingerprint(fleet_file: Path) -> dict[str, Any]:
    """Each host's artefact for the models (quantization, format, context), for run.json."""
    from harness.fleet.config import load_fleet  # the probe imports httpx: only when used
    from harness.fleet.probe import fleet_fingerprint

    try:
        return fleet_fingerprint(load_fleet(fleet_file))
    except UserError:
        raise
    except Exception as exc:  # a probe failure is recorded, the gateway will judge hosts
        return {"error": f"{type(exc).__name__}: {exc}"}


__all__ = [
    "Entrant",
    "RunOptions",
    "agent_extras",
    "fleet_fingerprint",
    "model_access",
    "refuse_failing_pair",
    "resolve_entrant",
]
