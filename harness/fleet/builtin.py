"""The built-in fleet: engine hosts harness starts itself, shared by a process's trials.

A model whose llms.yml entry says ``engine: builtin`` (``smollm2-135m``), a user's GGUF
(``--model gguf:PATH``) or a fleet.yml host of ``kind: engine`` is served by llama.cpp's
server in the ``engine`` image (``harness.fleet.engine_host``). ``engine_fleet_file``
starts that host once per process and model file (every trial of a job in this process
shares it) and writes a concrete fleet file naming its address, so the gateway, ``fleet
status`` and ``fleet bench`` see an ordinary host. ``materialize`` does the same for a
fleet.yml's engine hosts. The engines stop when the process exits (and ``harness sandbox
cleanup`` removes any a killed process left: they carry ``harness=1``).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

from harness.config.entrants import GGUF_PREFIX
from harness.config.settings import cache_dir, read_env
from harness.errors import UserError
from harness.fleet.config import FleetConfig, load_fleet
from harness.fleet.engine_host import EngineHost, start_engine
from harness.fleet.engine_model import SMOLLM2, GgufFile, describe_gguf, ensure_builtin_model
from harness.images.build import say

BUILTIN = "builtin"
HOST_NAME = "local-engine"
ENGINES_ENV = "HARNESS_ENGINE_FLEETS"  # {model: fleet file} of the engines a job started

_lock = threading.Lock()
_engines: dict[tuple[str, str], EngineHost] = {}  # (sha256, alias) -> running host
_written: list[Path] = []  # the fleet files naming them (removed with them)


def model_file(spec: str, *, source: str | Path | None = None) -> GgufFile:
    """The GGUF a spec names: ``builtin`` (fetched once) or a path (``gguf:`` optional)."""
    if spec == BUILTIN:
        return ensure_builtin_model()
    path = Path(spec.removeprefix(GGUF_PREFIX)).expanduser()
    if not path.is_absolute() and source is not None:
        path = Path(source).parent / path
    return describe_gguf(path)


def shared_engine(model: GgufFile, alias: str, *, name: str = HOST_NAME) -> EngineHost:
    """The running engine host for ``model`` in this process, started on first use."""
    key = (model.sha256, alias)
    with _lock:
        host = _engines.get(key)
        if host is None:
            say(f"starting the engine (llama.cpp's server) for {alias}; once per run")
            started = time.monotonic()
            host = start_engine(model, alias, name=name)
            say(f"engine ready at {host.url} in {time.monotonic() - started:.0f} s")
            _engines[key] = host
        return host


def stop_engines() -> None:
    """Stop every engine this process started (at exit, and when a caller is done)."""
    with _lock:
        hosts = list(_engines.values())
        _engines.clear()
        files = list(_written)
        _written.clear()
    for host in hosts:
        host.stop()
    for path in files:
        path.unlink(missing_ok=True)


atexit.register(stop_engines)


def engine_entry(host: EngineHost) -> dict[str, Any]:
    """A started engine as a fleet.yml host entry (with what the fingerprint records)."""
    return {
        **host.host_entry(),
        "kind": "engine",
        "model": str(host.model.path),
        "sha256": host.model.sha256,
        "quantization": host.model.quant,
    }


def engine_fleet_file(model_name: str, spec: str) -> Path:
    """A fleet file whose one host is the engine serving ``spec`` as ``model_name``: the
    one the job process started (``job_engines``), else one started here."""
    started = _job_fleets().get(model_name)
    if started is not None and Path(started).is_file():
        return Path(started)
    model = model_file(spec)
    alias = SMOLLM2.name if spec == BUILTIN else model_name
    host = shared_engine(model, alias)
    data = {
        "hosts": [engine_entry(host)],
        "models": {model_name: {"upstream": alias}},
        "routing": {"default_prefill_tps": 700, "default_decode_tps": 150},
    }
    return _write(data, f"{model_name}-{model.sha256[:12]}")


def _job_fleets() -> dict[str, str]:
    with contextlib.suppress(ValueError, TypeError):
        found = json.loads(read_env(ENGINES_ENV) or "{}")
        if isinstance(found, dict):
            return {str(k): str(v) for k, v in found.items()}
    return {}


def fleet_key(fleet_file: Path) -> str:
    """The key of a user's fleet file among a job's started fleets."""
    return f"fleet:{fleet_file.resolve()}"


@contextlib.contextmanager
def job_engines(
    models: Mapping[str, str], fleet_file: Path | None = None
) -> Iterator[dict[str, str]]:
    """Start the engines a job needs in the job's process: its models' (entrant name ->
    ``builtin`` or a GGUF path) and the ``kind: engine`` hosts of ``fleet_file``. Their
    fleet files are named in ``HARNESS_ENGINE_FLEETS`` for the job's trials (each runs in
    a worker process of its own); the engines stop when the job ends."""
    needs_fleet = fleet_file is not None and fleet_file.is_file() and not _all_started(fleet_file)
    if not models and not needs_fleet:
        yield {}
        return
    old = read_env(ENGINES_ENV)
    try:
        files = {name: str(engine_fleet_file(name, spec)) for name, spec in models.items()}
        if needs_fleet and fleet_file is not None:
            files[fleet_key(fleet_file)] = str(materialize(fleet_file))
        os.environ.update({ENGINES_ENV: json.dumps(files)})  # for the trials (a write)
        yield files
    finally:
        if old is None:
            os.environ.pop(ENGINES_ENV, None)
        else:
            os.environ.update({ENGINES_ENV: old})
        stop_engines()


def materialize(fleet_file: Path) -> Path:
    """``fleet_file`` itself when all its hosts have addresses; else a copy in which each
    ``kind: engine`` host has been started and given its address."""
    started = _job_fleets().get(fleet_key(fleet_file))
    if started is not None and Path(started).is_file():
        return Path(started)  # the job process started them: its trials share them
    cfg = load_fleet(fleet_file)
    if all(h.started for h in cfg.hosts):
        return fleet_file
    data = yaml.safe_load(fleet_file.read_text(encoding="utf-8")) or {}
    for i, host in enumerate(cfg.hosts):
        if host.started:
            continue
        assert host.model is not None  # the config's validator requires it
        model = model_file(host.model, source=fleet_file)
        alias = _alias(cfg, host.name)
        running = shared_engine(model, alias, name=host.name)
        data["hosts"][i] = {**data["hosts"][i], **engine_entry(running), "name": host.name}
    if cfg.bench_file is None:  # keep the bench beside the user's fleet file
        data["bench_file"] = str(cfg.bench_path())
    return _write(data, fleet_file.stem)


def _all_started(fleet_file: Path) -> bool:
    try:
        return all(h.started for h in load_fleet(fleet_file).hosts)
    except UserError:
        return True  # a broken file: the trials report it themselves


def _alias(cfg: FleetConfig, host: str) -> str:
    """The identifier the fleet's models ask this engine host for (its first one)."""
    names = [h.name for h in cfg.hosts]
    wanted = {mm.upstream_for(host) for mm in cfg.models.values() if host in mm.host_names(names)}
    if len(wanted) > 1:
        raise UserError(
            f"engine host {host} is asked for several models {sorted(wanted)}: it serves one",
            file=cfg.source,
            field="models",
            fix="give each GGUF its own `kind: engine` host",
        )
    return wanted.pop() if wanted else host


def _write(data: dict[str, Any], stem: str) -> Path:
    folder = cache_dir() / "fleets"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{stem}-{os.getpid()}.yml"  # another process has engines of its own
    tmp = path.with_suffix(".tmp")
    tmp.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    os.replace(tmp, path)
    with _lock:
        if path not in _written:
            _written.append(path)
    return path
