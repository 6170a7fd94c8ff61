"""``harness fleet status|bench`` and ``harness gateway serve`` (typer apps the main CLI
mounts as sub-commands; also runnable as ``python -m harness.cli gateway``)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from harness.errors import HarnessError, InfraError, UserError
from harness.fleet.config import FleetConfig, default_fleet_path, load_fleet
from harness.report.render import print_table

fleet_app = typer.Typer(
    help="Model hosts: what they serve and how fast.", no_args_is_help=True, add_completion=False
)
gateway_app = typer.Typer(
    help="The OpenAI-compatible gateway every agent talks to.",
    no_args_is_help=True,
    add_completion=False,
)


@gateway_app.callback()
def _gateway() -> None:
    """The OpenAI-compatible gateway every agent talks to."""


FLEET_OPT = typer.Option(
    None, "--fleet", help="fleet file (default $HARNESS_FLEET or <project>/fleet.yml)"
)


def _friendly(fn: Callable[..., Any]) -> Callable[..., Any]:
    @wraps(fn)
    def inner(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except HarnessError as exc:
            Console(stderr=True).print(f"[red]error:[/red] {exc.one_line()}", highlight=False)
            raise typer.Exit(exc.exit_code) from None

    return inner


def _load(fleet: Path | None) -> FleetConfig:
    """The fleet file's hosts, any ``kind: engine`` started; with no fleet file at all, the
    built-in engine host (llama.cpp's server on the built-in model), started here."""
    from harness.fleet.builtin import BUILTIN, engine_fleet_file, materialize
    from harness.fleet.engine_model import SMOLLM2

    path = fleet or default_fleet_path()
    if fleet is None and not path.is_file():
        Console(stderr=True).print(
            f"no fleet file ({path}): starting the built-in engine host ({SMOLLM2.name})",
            highlight=False,
        )
        return load_fleet(engine_fleet_file(SMOLLM2.name, BUILTIN))
    if not path.is_file():
        return load_fleet(path)  # the one-line error naming the file
    return load_fleet(materialize(path))


@fleet_app.command("status")
@_friendly
def status(
    fleet: Path | None = FLEET_OPT,
    as_json: bool = typer.Option(False, "--json", help="print the fleet fingerprint as JSON"),
    timeout: float = typer.Option(5.0, help="seconds to wait for each host"),
) -> None:
    """Probe every host: reachable, model loaded, quantization, format, arch, context, slots."""
    from harness.fleet.probe import fingerprint, probe_fleet, served

    cfg = _load(fleet)
    statuses = probe_fleet(cfg, timeout)
    fp = fingerprint(cfg, statuses)
    if as_json:
        typer.echo(json.dumps(fp, indent=2))
    else:
        console = Console()
        table = Table(title=f"fleet ({cfg.source})")
        for col in (
            "host",
            "reachable",
            "api",
            "identifier",
            "loaded",
            "quant",
            "format",
            "arch",
            "context",
            "slots",
        ):
            table.add_column(col)
        wanted = served(cfg)
        for name, st in statuses.items():
            idents: list[str | None] = [i for i, hosts in wanted.items() if name in hosts] or [None]
            for ident in idents:
                info = st.models.get(ident) if ident else None
                row = [
                    name,
                    "yes" if st.reachable else "[red]NO[/red]",
                    " ".join(x for x in (st.api, st.engine) if x) or "-",
                    ident or "-",
                ]
                if info:
                    row += [
                        "yes" if info.loaded else ("no" if info.loaded is False else "?"),
                        info.quantization or "?",
                        info.format or "?",
                        info.arch or "?",
                        str(info.context_length or info.max_context_length or "?"),
                        str(info.parallel or "?"),
                    ]
                else:
                    why = (st.error or "")[:40] if not st.reachable else "[red]not served[/red]"
                    row += [why, "", "", "", "", ""]
                table.add_row(*row)
        print_table(console, table)
        for w in fp["warnings"]:
            console.print(f"[bold red]WARNING:[/bold red] {w}", highlight=False)
        console.print(f"fingerprint {fp['digest']}", highlight=False)
    down = sorted(n for n, s in statuses.items() if not s.reachable)
    if cfg.hosts and len(down) == len(cfg.hosts):
        raise InfraError(
            "no fleet host is reachable", file=cfg.source, fix="start the hosts or check base_url"
        )
    if down:
        raise InfraError(
            f"fleet host(s) down: {', '.join(down)}",
            file=cfg.source,
            fix="start them, or remove them from the fleet file",
        )


@fleet_app.command("bench")
@_friendly
def bench(
    fleet: Path | None = FLEET_OPT,
    max_tokens: int = typer.Option(64, help="tokens to generate per measurement"),
    runs: int = typer.Option(1, min=1, help="measurements per host (median kept)"),
    out: Path | None = typer.Option(None, help="where to store (default: bench_file of fleet.yml)"),
) -> None:
    """Measure each host's prefill and decode tokens/second with a fixed prompt; store them."""
    from harness.fleet.bench import run_bench, save_bench

    cfg = _load(fleet)
    data = run_bench(cfg, max_tokens=max_tokens, runs=runs)
    path = save_bench(out or cfg.bench_path(), data)
    table = Table(title="fleet bench")
    for col in (
        "host",
        "model",
        "prompt",
        "completion",
        "ttft s",
        "prefill tok/s",
        "decode tok/s",
        "runs ok/failed",
        "error",
    ):
        table.add_column(col)
    for name, r in data["hosts"].items():
        table.add_row(
            name,
            str(r.get("model", "-")),
            str(r.get("prompt_tokens", "")),
            str(r.get("completion_tokens", "")),
            str(r.get("ttft_s", "")),
            str(r.get("prefill_tps") or ""),
            str(r.get("decode_tps") or ""),
            f"{r.get('runs', 0)}/{r.get('failed_runs', 0)}",
            r.get("error", "")[:60],
        )
    console = Console()
    print_table(console, table)
    for name, r in data["hosts"].items():
        if r.get("failed_runs"):
            console.print(
                f"[bold red]WARNING:[/bold red] host {name}: {r['failed_runs']} of "
                f"{r['failed_runs'] + r.get('runs', 0)} run(s) failed: {r.get('error', '')}",
                highlight=False,
            )
    typer.echo(f"stored in {path}")
    if not any(r.get("prefill_tps") for r in data["hosts"].values()):
        raise InfraError("no host could be measured", file=cfg.source)


@fleet_app.command("check")
@_friendly
def check(
    fleet: Path | None = FLEET_OPT,
    agents: str | None = typer.Option(
        None, "--agents", help="comma-separated agents (default: every agent it knows)"
    ),
    model: list[str] | None = typer.Option(
        None, "--model", help="check only this fleet model (repeatable)"
    ),
) -> None:
    """Probe each model with each agent's protocol: works / degraded / fails, with why."""
    from harness.config.settings import Settings
    from harness.gateway.check import AGENT_NEEDS, CHECK_FILE, check_fleet, save_check

    names = [a.strip() for a in agents.split(",") if a.strip()] if agents else list(AGENT_NEEDS)
    cfg = _load(fleet)
    unknown = [m for m in model or [] if m not in cfg.models]
    if unknown:
        raise UserError(
            f"the fleet has no model {', '.join(unknown)}",
            file=cfg.source,
            field="--model",
            fix=f"use one of: {', '.join(cfg.models) or 'none (add models: to the fleet)'}",
        )
    result = check_fleet(cfg, names, model or None)
    table = Table(title="fleet check: agent x model")
    for col in ("agent", "model", "verdict", "why"):
        table.add_column(col)
    colour = {"works": "green", "degraded": "yellow", "fails": "red"}
    for pair in result["pairs"]:
        level = pair["level"]
        table.add_row(
            pair["agent"],
            pair["model"],
            f"[{colour[level]}]{level}[/{colour[level]}]",
            "; ".join(pair["reasons"]) or "-",
        )
    Console().print(table)
    project = fleet.parent if fleet else Settings.from_env().fleet_file.parent
    typer.echo(f"stored in {save_check(project / CHECK_FILE, result)}")


@gateway_app.command("serve")
@_friendly
def serve_cmd(
    host: str = typer.Option(
        "127.0.0.1", "--host", help="address to bind (0.0.0.0 in a container)"
    ),
    port: int = typer.Option(8080, "--port"),
    fleet: Path | None = FLEET_OPT,
    telemetry: Path = typer.Option(
        Path("gateway-telemetry.jsonl"),
        "--telemetry",
        help="append one JSON line per call attempt (on disk by default)",
    ),
    record: Path | None = typer.Option(
        None, "--record", help="write request/response pairs (JSONL)"
    ),
    replay: Path | None = typer.Option(None, "--replay", help="serve a cassette; no host needed"),
    keys: Path | None = typer.Option(
        None,
        "--keys",
        help="per-trial keys {key: {trial, agent, model}}, re-read when the file changes",
    ),
    price_per_kwh: float | None = typer.Option(None, help="USD per kWh (default: fleet.yml's)"),
    router: str | None = typer.Option(
        None, "--router", help="a shared router's URL (harness gateway router); default: own"
    ),
) -> None:
    """Serve /v1/models, /v1/chat/completions, /v1/completions, /v1/embeddings, /v1/responses."""
    from harness.gateway import build_config, serve

    path = fleet or default_fleet_path()
    fleet_cfg: FleetConfig | Path = path
    if replay and fleet is None and not path.is_file():
        fleet_cfg = FleetConfig()  # replaying needs no fleet
    elif not replay and path.is_file() and not all(h.started for h in load_fleet(path).hosts):
        from harness.fleet.builtin import materialize  # its `kind: engine` hosts, started

        fleet_cfg = materialize(path)
    config = build_config(
        fleet_cfg,
        telemetry=telemetry,
        record=record,
        replay=replay,
        keys_file=keys,
        require_keys=keys is not None,
        price_per_kwh=price_per_kwh,
        router_url=None if replay else router,
    )
    typer.echo(
        f"harness gateway on http://{host}:{port}/v1"
        + (f" replaying {replay}" if replay else f" over {len(config.fleet.hosts)} host(s)")
        + f"; telemetry in {telemetry}"
    )
    serve(config, host, port)


@gateway_app.command("router")
@_friendly
def router_cmd(
    host: str = typer.Option("127.0.0.1", "--host", help="address to bind"),
    port: int = typer.Option(8090, "--port"),
    fleet: Path | None = FLEET_OPT,
) -> None:
    """Serve one routing state that several gateways share (their --router URL)."""

    from harness.fleet.router_service import RouterService

    cfg = load_fleet(fleet)
    with RouterService(cfg, host, port) as service:
        typer.echo(f"harness fleet router on {service.url} over {len(cfg.hosts)} host(s)")
        while True:
            time.sleep(3600)
