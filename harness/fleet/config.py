"""``fleet.yml``: the model hosts, which upstream identifier each entrant model maps to,
prices, energy, and the gateway's routing knobs. Pydantic models plus a loader that turns
every mistake into a one-line ``UserError`` naming the file and the field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from harness.config.settings import Settings, read_env
from harness.errors import UserError


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Price(_Strict):
    """USD per one million tokens. ``cached_input`` defaults to ``input``."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cached_input: float | None = Field(default=None, ge=0)

    @property
    def cached(self) -> float:
        return self.input if self.cached_input is None else self.cached_input


class Host(_Strict):
    """One model server: LM Studio or any OpenAI-compatible endpoint, or (``kind: engine``)
    llama.cpp's server that harness starts itself on a GGUF file (``model``)."""

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    base_url: str = ""  # required, except for an engine harness has not started yet
    kind: Literal["openai", "engine"] = "openai"
    model: str | None = None  # kind engine: "builtin" or the path of a .gguf file
    sha256: str | None = None  # kind engine: the GGUF's (harness fills it in when it starts)
    quantization: str | None = None  # kind engine: from the GGUF's header (likewise)
    api_key_env: str | None = None
    watts: float | None = Field(default=None, ge=0)
    max_parallel: int | None = Field(default=None, ge=1)
    messages: bool = False  # serves Anthropic /v1/messages itself: Messages calls pass through

    @field_validator("base_url")
    @classmethod
    def _url(cls, value: str) -> str:
        if value == "":
            return value
        if not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        value = value.rstrip("/")
        return value[: -len("/v1")] if value.endswith("/v1") else value

    @model_validator(mode="after")
    def _kind(self) -> Host:
        if self.kind == "engine" and not self.model:
            raise ValueError("an engine host needs `model: builtin` or the path of a .gguf file")
        if self.kind == "openai" and not self.base_url:
            raise ValueError("base_url is required (or `kind: engine` with `model:`)")
        return self

    @property
    def started(self) -> bool:
        """False for an engine host harness still has to start (no address yet)."""
        return bool(self.base_url)

    def api_key(self) -> str | None:
        return read_env(self.api_key_env) if self.api_key_env else None

    def headers(self) -> dict[str, str]:
        key = self.api_key()
        return {"Authorization": f"Bearer {key}"} if key else {}


class ModelMap(_Strict):
    """An entrant model: its upstream identifier (one for all hosts, or per host)."""

    upstream: str | dict[str, str]
    hosts: list[str] | None = None  # default: every host (or the hosts named in upstream)
    aliases: list[str] = Field(default_factory=list)

    def host_names(self, all_hosts: list[str]) -> list[str]:
        if self.hosts is not None:
            return list(self.hosts)
        if isinstance(self.upstream, dict):
            return list(self.upstream)
        return list(all_hosts)

    def upstream_for(self, host: str) -> str:
        if isinstance(self.upstream, str):
            return self.upstream
        return self.upstream[host]


class Cooldown(_Strict):
    base_s: float = Field(default=2.0, ge=0)
    max_s: float = Field(default=60.0, ge=0)


class Routing(_Strict):
    strategy: Literal["earliest_finish", "round_robin"] = "earliest_finish"
    affinity: bool = True
    # a trial leaves its host when that host's expected finish exceeds the best one
    # by this factor (or the host is at its parallel slots)
    affinity_slack: float = Field(default=2.0, ge=1.0)
    max_attempts: int = Field(default=4, ge=1)
    max_wait_s: float = Field(default=30.0, ge=0)
    # wall-clock a call may spend waiting out rate limits (429): a host's Retry-After is
    # waited in full, a per-minute quota is not "beaten" by seconds of backoff; past this
    # budget the call is a harness fault (the trial ends as error, never graded)
    retry_budget_s: float = Field(default=120.0, ge=0)
    cooldown: Cooldown = Field(default_factory=Cooldown)
    default_prefill_tps: float = Field(default=500.0, gt=0)
    default_decode_tps: float = Field(default=30.0, gt=0)
    default_parallel: int = Field(default=1, ge=1)
    connect_timeout_s: float = Field(default=10.0, gt=0)
    read_timeout_s: float = Field(default=600.0, gt=0)


class FleetConfig(_Strict):
    hosts: list[Host] = Field(default_factory=list)
    models: dict[str, ModelMap] = Field(default_factory=dict)
    # extra agent-facing names, per agent: {agent: {name-the-agent-sends: entrant model}}
    agent_aliases: dict[str, dict[str, str]] = Field(default_factory=dict)
    prices: dict[str, Price] = Field(default_factory=dict)
    price_per_kwh: float = Field(default=0.0, ge=0)
    routing: Routing = Field(default_factory=Routing)
    bench_file: str | None = None  # default: .harness/fleet-bench.json beside fleet.yml
    source: str | None = Field(default=None, exclude=True)

    @model_validator(mode="after")
    def _coherent(self) -> FleetConfig:
        names = [h.name for h in self.hosts]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"hosts: duplicate host name(s) {sorted(dup)}")
        for model, mm in self.models.items():
            for h in mm.host_names(names):
                if h not in names:
                    raise ValueError(
                        f"models.{model}: unknown host {h!r} (hosts are {names or 'none'})"
                    )
            if isinstance(mm.upstream, dict) and mm.hosts:
                missing = [h for h in mm.hosts if h not in mm.upstream]
                if missing:
                    raise ValueError(f"models.{model}.upstream: no identifier for {missing}")
        seen: dict[str, str] = {}
        for model, mm in self.models.items():
            for alias in mm.aliases:
                if alias in self.models or seen.get(alias, model) != model:
                    raise ValueError(f"models.{model}.aliases: {alias!r} already names a model")
                seen[alias] = model
        for agent, table in self.agent_aliases.items():
            for alias, target in table.items():
                if target not in self.models:
                    raise ValueError(f"agent_aliases.{agent}.{alias}: unknown model {target!r}")
        return self

    def host(self, name: str) -> Host:
        for h in self.hosts:
            if h.name == name:
                return h
        raise KeyError(name)

    def resolve_model(self, requested: str, agent: str | None, pinned: str | None) -> str | None:
        """Map the name an agent sent to an entrant model.

        Order: the agent's own aliases, global aliases, a model name, and finally the model
        that the caller's key is pinned to (agents that hard-code a model name still reach
        the entrant's model). ``None`` when nothing matches.
        """
        if agent and requested in self.agent_aliases.get(agent, {}):
            return self.agent_aliases[agent][requested]
        if requested in self.models:
            return requested
        for model, mm in self.models.items():
            if requested in mm.aliases:
                return model
        if pinned and pinned in self.models:
            return pinned
        return None

    def bench_path(self) -> Path:
        base = Path(self.source).parent if self.source else Path.cwd()
        return base / (self.bench_file or ".harness/fleet-bench.json")


def default_fleet_path() -> Path:
    return Settings.from_env().fleet_file


def _first_error(exc: ValidationError) -> tuple[str, str]:
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err.get("loc", ()))
    msg = err.get("msg", "invalid")
    msg = msg.removeprefix("Value error, ")
    return loc, msg


def parse_fleet(data: Any, source: str | Path | None = None) -> FleetConfig:
    """Validate already-loaded YAML/JSON data."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise UserError(
            "the fleet file must hold a mapping",
            file=source,
            fix="start with 'hosts:' and 'models:'",
        )
    try:
        cfg = FleetConfig.model_validate(data)
    except ValidationError as exc:
        loc, msg = _first_error(exc)
        more = len(exc.errors()) - 1
        if more:
            msg = f"{msg} (and {more} more problem(s))"
        raise UserError(
            msg, file=source, field=loc or None, fix="see fleet.yml.example for the format"
        ) from None
    cfg.source = str(source) if source else None
    return cfg


def load_fleet(path: str | Path | None = None) -> FleetConfig:
    """Load ``fleet.yml`` (``$HARNESS_FLEET`` or ``<project>/fleet.yml`` by default)."""
    p = Path(path) if path else default_fleet_path()
    if not p.is_file():
        raise UserError(
            "fleet file not found",
            file=p,
            fix="copy fleet.yml.example to fleet.yml or pass --fleet FILE",
        )
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else None
        raise UserError(
            f"not valid YAML: {getattr(exc, 'problem', exc)}", file=p, field=where
        ) from None
    return parse_fleet(data, p)
