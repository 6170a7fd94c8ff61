"""``harness run -c job.yaml``: a job written down, with the same fields as the flags.

Keys are the flags' names without the dashes (``max-interruptions: 3``); lists may be
YAML lists or comma-separated strings, as on the command line. A flag given on the
command line with a value other than its default wins over the file. A bad key or value
is one line naming the file, the field and the fix (exit 2). The file is copied into the
job's folder (``job.yaml``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from harness.errors import UserError
from harness.util.strict_yaml import format_validation_error, kebab, load_yaml_file

KEPT_NAME = "job.yaml"  # the copy in the job's folder
ENV_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _names(value: Any) -> Any:
    """``"a,b"`` or ``["a", "b,c"]`` -> ``["a", "b", "c"]`` (other values as they are)."""
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [p.strip() for v in value for p in v.split(",") if p.strip()]
    return value


class JobFile(BaseModel):
    """Every ``harness run`` flag a job file may set (``harness run --help`` says each)."""

    model_config = ConfigDict(extra="forbid", alias_generator=kebab, populate_by_name=True)

    agents: list[str] = Field(default_factory=list, description="agent names")
    models: list[str] = Field(default_factory=list, description="model names")
    scenarios: list[str] = Field(default_factory=list, description="scenario names or globs")
    all_: bool = Field(default=False, description="every non-smoke scenario")
    exclude: list[str] = Field(default_factory=list, description="scenario globs left out")
    limit: int | None = Field(default=None, ge=1, description="the first N scenarios")
    reps: int = Field(default=1, ge=1, description="repetitions per seed")
    seeds: list[str] = Field(default_factory=list, description="16-hex seeds")
    concurrency: int | None = Field(default=None, ge=1, description="trials at once")
    sandbox: str = Field(default="docker", description="docker or local")
    job: str | None = Field(default=None, description="the job's name")
    max_interruptions: int = Field(
        default=2, ge=0, description="retries after infrastructure errors"
    )
    retry_errors: bool = Field(default=True, description="run an earlier run's errors again")
    executor: str = Field(default="local", description="local or ray")
    address: str | None = Field(default=None, description="the Ray cluster's head")
    router_host: str | None = Field(default=None, description="the shared router's address")
    budget_tokens: int | None = Field(default=None, description="--budget-tokens")
    budget_cost_usd: float | None = Field(default=None, description="--budget-cost-usd")
    budget_calls: int | None = Field(default=None, description="--budget-calls")
    budget_call_tokens: int | None = Field(default=None, description="--budget-call-tokens")
    replay: Path | None = Field(default=None, description="a cassette (relative to the file)")
    agent_env: list[str] = Field(default_factory=list, description="KEY=VAL for the agent")
    agent_arg: list[str] = Field(default_factory=list, description="arguments for the agent")

    @field_validator("agents", "models", "scenarios", "exclude", "seeds", mode="before")
    @classmethod
    def _lists(cls, value: Any) -> Any:
        return _names(value)

    @field_validator("agent_env", "agent_arg", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value


def load_job_file(path: Path) -> JobFile:
    """The job file at ``path``, validated; a relative ``replay`` is read from its folder."""
    if not path.is_file():
        raise UserError(
            "job file not found", file=path, field="-c", fix="give the path of a job YAML file"
        )
    data = load_yaml_file(path)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise UserError(
            "a job file is a mapping of flags to values",
            file=path,
            field="(top level)",
            fix="e.g. agents: [oracle, nop]",
        )
    try:
        loaded = JobFile.model_validate(data)
    except ValidationError as err:
        raise format_validation_error(
            err, path, JobFile, "see `harness run --help` for the flags"
        ) from None
    if loaded.replay is not None and not loaded.replay.is_absolute():
        loaded = loaded.model_copy(update={"replay": path.parent / loaded.replay})
    return loaded


def agent_env(pairs: list[str], source: str = "--agent-env") -> dict[str, str]:
    """``["K=V", ...]`` -> ``{"K": "V"}``; a pair without ``=`` or a bad name: exit 2."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not ENV_KEY.fullmatch(key):
            raise UserError(
                f"'{pair}' is not KEY=VALUE",
                field=source,
                fix="e.g. --agent-env MAX_STEPS=40 (a name of letters, digits and '_')",
            )
        out[key] = value
    return out
