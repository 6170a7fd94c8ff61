"""Ask each host what it serves, with LM Studio's own model APIs.

``/api/v1/models`` (LM Studio 0.4+), then ``/api/v0/models`` (0.3.6+), then the plain
OpenAI ``/v1/models`` that any compatible server has. llama.cpp's server answers the last
with each model's quantisation and context (``meta``), and its ``/props`` with its build.
The result per host: reachable, models loaded, quantization, format, architecture,
context length, parallel slots. The fleet fingerprint groups hosts by upstream identifier
and flags identifiers served with different artefacts (quantization, format or context):
"the same model" that is not.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any

import httpx

from harness.fleet.config import FleetConfig, Host

ARTEFACT_KEYS = ("quantization", "format", "context_length")


@dataclass
class ModelInfo:
    id: str
    loaded: bool | None = None
    quantization: str | None = None
    format: str | None = None
    arch: str | None = None
    context_length: int | None = None
    max_context_length: int | None = None
    parallel: int | None = None

    def artefact(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ARTEFACT_KEYS}

    def label(self) -> str:
        parts = [self.quantization or "?", self.format or "?"]
        if self.context_length:
            parts.append(f"ctx{self.context_length}")
        return "/".join(parts)


@dataclass
class HostStatus:
    name: str
    base_url: str
    reachable: bool = False
    api: str | None = None  # "lmstudio-v1", "lmstudio-v0", "llama.cpp", "openai"
    error: str | None = None
    engine: str | None = None  # the engine's build, where it says (llama.cpp's /props)
    models: dict[str, ModelInfo] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "base_url": self.base_url,
            "reachable": self.reachable,
            "api": self.api,
            "engine": self.engine,
            "error": self.error,
            "models": {k: asdict(v) for k, v in self.models.items()},
        }


def _int(v: Any) -> int | None:
    try:
        return int(v) if v is not None else None
    except (TypeError, ValueError):
        return None


def parse_v1(data: dict[str, Any]) -> dict[str, ModelInfo]:
    out: dict[str, ModelInfo] = {}
    for m in data.get("models") or []:
        q = m.get("quantization")
        quant = q.get("name") if isinstance(q, dict) else q
        instances = m.get("loaded_instances") or []
        base = dict(
            quantization=quant,
            format=m.get("format"),
            arch=m.get("architecture"),
            max_context_length=_int(m.get("max_context_length")),
        )
        if not instances:
            out[m.get("key")] = ModelInfo(m.get("key"), loaded=False, **base)
        for inst in instances:
            cfg = inst.get("config") or {}
            parallel = next(
                (
                    cfg[k]
                    for k in ("parallel", "max_parallel_predictions", "num_parallel", "n_parallel")
                    if k in cfg
                ),
                None,
            )
            iid = inst.get("id") or m.get("key")
            out[iid] = ModelInfo(
                iid,
                loaded=True,
                context_length=_int(cfg.get("context_length")),
                parallel=_int(parallel),
                **base,
            )
    return out


def parse_v0(data: dict[str, Any]) -> dict[str, ModelInfo]:
    out: dict[str, ModelInfo] = {}
    for m in data.get("data") or []:
        loaded = m.get("state") == "loaded" if "state" in m else None
        out[m["id"]] = ModelInfo(
            m["id"],
            loaded=loaded,
            quantization=m.get("quantization"),
            format=m.get("compatibility_type"),
            arch=m.get("arch"),
            context_length=_int(m.get("loaded_context_length")),
            max_context_length=_int(m.get("max_context_length")),
        )
    return out


def parse_openai(data: dict[str, Any]) -> dict[str, ModelInfo]:
    out: dict[str, ModelInfo] = {}
    for m in data.get("data") or []:
        meta = m.get("meta") if isinstance(m.get("meta"), dict) else {}
        llama = m.get("owned_by") == "llamacpp"  # llama.cpp's server: the GGUF's own figures
        out[m["id"]] = ModelInfo(
            m["id"],
            loaded=True,
            quantization=meta.get("ftype") if llama else None,
            format="gguf" if llama else None,
            context_length=_int(meta.get("n_ctx")) if llama else None,
            max_context_length=_int(meta.get("n_ctx_train")) if llama else None,
        )
    return out


async def probe_llamacpp(host: Host, client: httpx.AsyncClient, status: HostStatus) -> None:
    """llama.cpp's ``/props``: its build, and its slots (the parallel calls it serves)."""
    try:
        r = await client.get(host.base_url + "/props", headers=host.headers())
        props = r.json() if r.status_code == 200 else {}
    except (httpx.HTTPError, ValueError):
        return
    if not isinstance(props, dict) or "build_info" not in props:
        return
    status.api, status.engine = "llama.cpp", str(props["build_info"])
    for info in status.models.values():
        info.parallel = _int(props.get("total_slots"))


PROBES = (
    ("/api/v1/models", "lmstudio-v1", parse_v1),
    ("/api/v0/models", "lmstudio-v0", parse_v0),
    ("/v1/models", "openai", parse_openai),
)


async def probe_host(host: Host, client: httpx.AsyncClient) -> HostStatus:
    status = HostStatus(host.name, host.base_url)
    errors = []
    for path, api, parse in PROBES:
        try:
            r = await client.get(host.base_url + path, headers=host.headers())
        except httpx.HTTPError as exc:
            status.error = f"{type(exc).__name__}: {exc}".strip().rstrip(":")
            return status  # unreachable: no point trying other paths
        status.reachable = True
        if r.status_code != 200:
            errors.append(f"{path}: HTTP {r.status_code}")
            continue
        try:
            models = parse(r.json())
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            errors.append(f"{path}: unreadable ({exc})")
            continue
        status.api, status.models = api, models
        if api == "openai" and any(m.format == "gguf" for m in models.values()):
            await probe_llamacpp(host, client, status)
        return status
    status.error = "; ".join(errors)
    return status


async def probe_fleet_async(cfg: FleetConfig, timeout: float = 5.0) -> dict[str, HostStatus]:
    async with httpx.AsyncClient(timeout=timeout) as client:
        results = await asyncio.gather(*(probe_host(h, client) for h in cfg.hosts))
    return {s.name: s for s in results}


def probe_fleet(cfg: FleetConfig, timeout: float = 5.0) -> dict[str, HostStatus]:
    return asyncio.run(probe_fleet_async(cfg, timeout))


def served(cfg: FleetConfig) -> dict[str, dict[str, str]]:
    """{upstream identifier: {host: entrant model}} from the fleet file."""
    out: dict[str, dict[str, str]] = {}
    names = [h.name for h in cfg.hosts]
    for model, mm in cfg.models.items():
        for host in mm.host_names(names):
            out.setdefault(mm.upstream_for(host), {})[host] = model
    return out


def fingerprint(cfg: FleetConfig, statuses: dict[str, HostStatus]) -> dict[str, Any]:
    """A JSON-able record of what each host serves, with warnings; stored in run.json.
    Engine hosts harness started add the GGUF's sha256 and the engine's build."""
    configured = {h.name: h for h in cfg.hosts}
    identifiers: dict[str, Any] = {}
    warnings: list[str] = []
    for ident, hosts in sorted(served(cfg).items()):
        per_host: dict[str, Any] = {}
        for host in sorted(hosts):
            st = statuses.get(host)
            info = st.models.get(ident) if st else None
            if st is None or not st.reachable:
                per_host[host] = {"reachable": False}
                why = f": {st.error}" if st is not None and st.error else ""
                down = f"host {host} is down{why}"
                if down not in warnings:
                    warnings.append(down)
            elif info is None:
                per_host[host] = {"reachable": True, "loaded": False}
                warnings.append(f"host {host} does not serve {ident!r}")
            else:
                per_host[host] = {
                    "reachable": True,
                    "loaded": info.loaded,
                    "arch": info.arch,
                    "parallel": info.parallel,
                    **info.artefact(),
                }
                conf = configured.get(host)
                if st.engine:
                    per_host[host]["engine"] = st.engine
                if conf is not None and conf.sha256:
                    per_host[host]["sha256"] = conf.sha256
        arts = {
            h: tuple(v.get(k) for k in ARTEFACT_KEYS)
            for h, v in per_host.items()
            if v.get("reachable") and "format" in v
        }
        for h, a in sorted(arts.items()):
            if not any(a):
                warnings.append(
                    f"host {h} reports no artefact for {ident!r} (plain OpenAI API): "
                    "it cannot be checked to be the same model"
                )
        # compare what is known: a host that does not report a field does not differ on it
        differing = [
            k
            for i, k in enumerate(ARTEFACT_KEYS)
            if len({a[i] for a in arts.values() if a[i] is not None}) > 1
        ]
        if differing:
            detail = ", ".join(
                f"{h}={'/'.join(str(x) for x in a)}" for h, a in sorted(arts.items())
            )
            warnings.append(
                f"{ident!r} is served with different artefacts "
                f"({', '.join(differing)} differ): {detail}"
            )
        identifiers[ident] = {
            "models": sorted(set(hosts.values())),
            "hosts": per_host,
            "heterogeneous": bool(differing),
            "differs": differing,
        }
    body = {
        "identifiers": identifiers,
        "hosts": {
            n: {"base_url": s.base_url, "reachable": s.reachable, "api": s.api, "engine": s.engine}
            for n, s in sorted(statuses.items())
        },
    }
    # the digest covers the artefacts served, not who is up: a host that is down changes
    # nothing unless it was the only one serving its artefact
    digest = hashlib.sha256(
        json.dumps(
            {
                k: sorted(
                    {
                        tuple(v.get(a) for a in ARTEFACT_KEYS)
                        for v in d["hosts"].values()
                        if v.get("reachable") and "format" in v
                    },
                    key=repr,
                )
                for k, d in identifiers.items()
            },
            sort_keys=True,
        ).encode()
    ).hexdigest()[:16]
    return {
        **body,
        "heterogeneous": any(d["heterogeneous"] for d in identifiers.values()),
        "warnings": warnings,
        "digest": digest,
    }


def fleet_fingerprint(cfg: FleetConfig, timeout: float = 5.0) -> dict[str, Any]:
    """Probe the fleet and return its fingerprint (a JSON-able dict)."""
    return fingerprint(cfg, probe_fleet(cfg, timeout))
