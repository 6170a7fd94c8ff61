"""The gateway: one OpenAI-compatible endpoint over the fleet.

Every agent talks to it, never to a host. Per call it: finds the trial from the bearer key,
maps the agent-facing model name to an entrant model and, per host, an upstream
identifier; asks the router for the host with the earliest expected finish; always
streams from upstream with ``stream_options.include_usage`` so that it measures time to
first token and total time itself; retries connect errors, 5xx and 429 on another host
(tenacity) while nothing has reached the client; and writes one telemetry line per
attempt. ``--record`` keeps request/response pairs; ``--replay`` serves them, no host.

    python -m harness.fleet.gateway serve --fleet fleet.yml --port 8080 --telemetry t.jsonl
"""

from __future__ import annotations

import contextlib
import email.utils
import json
import secrets
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import yaml
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt

from harness.errors import UserError
from harness.fleet import wire
from harness.fleet.bench import load_bench
from harness.fleet.cassette import CassetteExhausted, CassetteMismatch, Recorder, Replayer
from harness.fleet.config import FleetConfig, Host, Price, load_fleet
from harness.fleet.probe import HostStatus, fingerprint, probe_fleet_async
from harness.fleet.router import HostState, Job, Router
from harness.fleet.serving import ThreadedServer
from harness.fleet.telemetry import EnergyMeter, TelemetrySink, energy_kwh, rates, token_cost

CHAT = "/v1/chat/completions"
COMPLETIONS = "/v1/completions"
EMBEDDINGS = "/v1/embeddings"
RESPONSES = "/v1/responses"
RETRYABLE_STATUS = {404, 408, 409, 429, 500, 502, 503, 504}


# ---- configuration ------------------------------------------------------------------------
@dataclass(frozen=True)
class KeyInfo:
    trial: str | None
    agent: str | None = None
    model: str | None = None


@dataclass
class GatewayConfig:
    fleet: FleetConfig = field(default_factory=FleetConfig)
    prices: dict[str, Price] = field(default_factory=dict)  # model -> USD per 1M tokens
    price_per_kwh: float | None = None  # default: the fleet file's
    telemetry_path: str | Path | None = None
    record_path: str | Path | None = None
    replay_path: str | Path | None = None
    keys: dict[str, KeyInfo] = field(default_factory=dict)
    keys_file: str | Path | None = None
    require_keys: bool = False
    probe_timeout_s: float = 3.0
    bench: dict[str, dict[str, float]] | None = None  # host -> prefill_tps/decode_tps

    def price_for(self, model: str | None, upstream: str | None) -> Price | None:
        table = {**self.fleet.prices, **self.prices}
        return table.get(model or "") or table.get(upstream or "")

    @property
    def kwh_price(self) -> float:
        return self.fleet.price_per_kwh if self.price_per_kwh is None else self.price_per_kwh


def load_keys(path: str | Path) -> dict[str, KeyInfo]:
    """A keys file: ``{key: {trial, agent, model}}`` as JSON or YAML."""
    p = Path(path)
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise UserError(f"cannot read keys: {exc}", file=p) from None
    if not isinstance(data, dict):
        raise UserError("keys file must map key -> {trial, agent, model}", file=p)
    out = {}
    for key, info in data.items():
        info = info if isinstance(info, dict) else {"trial": info}
        out[str(key)] = KeyInfo(info.get("trial"), info.get("agent"), info.get("model"))
    return out


def retry_after_seconds(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def prompt_estimate(body: dict) -> int:
    """Tokens of the prompt, estimated from its characters (for routing only)."""
    if isinstance(body.get("messages"), list):
        chars = 0
        for m in body["messages"]:
            c = m.get("content") if isinstance(m, dict) else m
            chars += len(c) if isinstance(c, str) else len(json.dumps(c or ""))
            if isinstance(m, dict) and m.get("tool_calls"):
                chars += len(json.dumps(m["tool_calls"]))
            chars += 8
        if body.get("tools"):
            chars += len(json.dumps(body["tools"]))
        return max(1, chars // 4)
    for key in ("prompt", "input"):
        if key in body:
            return wire.estimate_tokens(body[key])
    return 1


def _error(
    status: int, message: str, kind: str = "gateway_error", headers: dict[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(
        {"error": {"message": message, "type": kind, "code": kind}},
        status_code=status,
        headers=headers,
    )


# ---- per-call state -----------------------------------------------------------------------
class Retryable(Exception):
    def __init__(
        self,
        message: str,
        status: int | None = None,
        body: bytes = b"",
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.body = body
        self.headers = headers or {}


class NoHost(Retryable):
    pass


class Final(Exception):
    """An upstream answer to hand to the client as it is (e.g. 400 for a bad request)."""

    def __init__(self, status: int, body: bytes, content_type: str | None) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status
        self.body = body
        self.content_type = content_type


@dataclass
class Call:
    """One client call: who, what, and how it went across attempts."""

    call_id: str
    key: KeyInfo
    model: str
    requested: str
    endpoint: str
    body: dict
    stream: bool
    include_usage: bool
    candidates: list[str]
    job: Job
    tried: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


@dataclass
class Attempt:
    """One try on one host; ``finish`` turns it into a telemetry line."""

    call: Call
    host: str
    upstream: str
    retry: int
    had_slot: bool
    ts: float = field(default_factory=time.time)
    t0: float = field(default_factory=time.monotonic)
    ttft_s: float | None = None
    first_chunk_s: float | None = None
    usage: dict | None = None
    status: int | str | None = None
    error: str | None = None
    incomplete: bool = False
    done: bool = False
    token: Any = None  # the router's handle while in flight; None once finished

    def mark_chunk(self, has_output: bool) -> None:
        now = time.monotonic() - self.t0
        if self.first_chunk_s is None:
            self.first_chunk_s = now
        if has_output and self.ttft_s is None:
            self.ttft_s = now


@dataclass
class Opened:
    """An upstream answer that has started well (or, non-streamed, has finished)."""

    attempt: Attempt
    response: httpx.Response | None
    lines: AsyncIterator[str] | None
    events: list[tuple[str | None, str]]
    acc: wire.ChunkAccumulator
    decoder: wire.SSEDecoder = field(default_factory=wire.SSEDecoder)
    json_body: dict | None = None


# ---- the gateway --------------------------------------------------------------------------
class Gateway:
    def __init__(self, config: GatewayConfig) -> None:
        self.config = config
        fleet = config.fleet
        bench = (
            config.bench
            if config.bench is not None
            else (load_bench(fleet.bench_path()) if fleet.hosts else {})
        )
        r = fleet.routing
        self.router = Router(
            [
                HostState(
                    h.name,
                    prefill_tps=float(
                        bench.get(h.name, {}).get("prefill_tps") or r.default_prefill_tps
                    ),
                    decode_tps=float(
                        bench.get(h.name, {}).get("decode_tps") or r.default_decode_tps
                    ),
                    slots=h.max_parallel or r.default_parallel,
                    watts=h.watts,
                )
                for h in fleet.hosts
            ],
            r,
        )
        self.energy = {h.name: EnergyMeter() for h in fleet.hosts}
        self.telemetry = TelemetrySink(config.telemetry_path)
        self.recorder = Recorder(config.record_path) if config.record_path else None
        self.replayer = Replayer(config.replay_path) if config.replay_path else None
        self.keys: dict[str, KeyInfo] = dict(config.keys)  # given and issued
        self._file_keys: dict[str, KeyInfo] = {}
        self._keys_mtime: tuple[int, int, int] | None = None
        self.statuses: dict[str, HostStatus] = {}
        self.client: httpx.AsyncClient | None = None
        self.app = Starlette(
            routes=[
                Route("/v1/models", self.models),
                Route(CHAT, self.generate, methods=["POST"]),
                Route(COMPLETIONS, self.generate, methods=["POST"]),
                Route(EMBEDDINGS, self.passthrough, methods=["POST"]),
                Route(RESPONSES, self.passthrough, methods=["POST"]),
                Route("/health", self.health),
            ],
            lifespan=self._lifespan,
        )
        self.app.state.gateway = self

    # ---- lifecycle ------------------------------------------------------------------------
    @contextlib.asynccontextmanager
    async def _lifespan(self, app: Starlette) -> AsyncIterator[None]:
        r = self.config.fleet.routing
        self.client = httpx.AsyncClient(
            timeout=httpx.Timeout(r.read_timeout_s, connect=r.connect_timeout_s),
            limits=httpx.Limits(max_connections=1000, max_keepalive_connections=200),
        )
        if self.config.fleet.hosts and not self.replayer:
            await self.probe()
        try:
            yield
        finally:
            await self.client.aclose()
            self.telemetry.close()
            if self.recorder:
                self.recorder.close()

    async def probe(self) -> dict[str, HostStatus]:
        """Ask every host what it serves; learn artefacts and parallel slots."""
        self.statuses = await probe_fleet_async(self.config.fleet, self.config.probe_timeout_s)
        for h in self.config.fleet.hosts:
            st = self.statuses.get(h.name)
            if h.max_parallel is None and st:
                slots = [m.parallel for m in st.models.values() if m.parallel]
                if slots:
                    self.router.hosts[h.name].slots = max(slots)
        return self.statuses

    def fingerprint(self) -> dict[str, Any]:
        return fingerprint(self.config.fleet, self.statuses)

    def artefact(self, host: str, upstream: str) -> str | None:
        st = self.statuses.get(host)
        info = st.models.get(upstream) if st else None
        return info.quantization if info else None

    # ---- keys and models ------------------------------------------------------------------
    def _refresh_keys(self) -> None:
        path = self.config.keys_file
        if not path:
            return
        try:
            st = Path(path).stat()
        except OSError:
            return
        mtime = (st.st_mtime_ns, st.st_size, st.st_ino)  # mtime alone can miss quick rewrites
        if mtime != self._keys_mtime:
            try:
                self._file_keys = load_keys(path)  # the file is the truth: revoked keys go
            except UserError:
                return  # half-written: keep the old keys, read it again next time
            self._keys_mtime = mtime

    def issue_key(self, trial: str, agent: str | None = None, model: str | None = None) -> str:
        key = f"hk-{secrets.token_urlsafe(18)}"
        self.keys[key] = KeyInfo(trial, agent, model)
        return key

    def authenticate(self, request: Request) -> KeyInfo | None:
        auth = request.headers.get("authorization", "")
        token = (
            auth[7:].strip()
            if auth.lower().startswith("bearer ")
            else (request.headers.get("x-api-key") or "")
        )
        self._refresh_keys()
        info = self.keys.get(token) or self._file_keys.get(token)
        if info is None and not self.config.require_keys:
            return KeyInfo(None)
        return info

    def resolve(self, requested: str, key: KeyInfo) -> str | None:
        fleet = self.config.fleet
        if self.replayer and not fleet.models:  # replay without a fleet: names pass through
            return requested or key.model
        return fleet.resolve_model(requested, key.agent, key.model)

    async def models(self, request: Request) -> Response:
        key = self.authenticate(request)
        if key is None:
            return _error(401, "unknown API key", "invalid_api_key")
        fleet = self.config.fleet
        names = list(fleet.models)
        for mm in fleet.models.values():
            names += mm.aliases
        if key.agent:
            names += list(fleet.agent_aliases.get(key.agent, {}))
        if key.model and key.model not in names:
            names.append(key.model)
        return JSONResponse(
            {
                "object": "list",
                "data": [
                    {"id": n, "object": "model", "created": 0, "owned_by": "harness"}
                    for n in dict.fromkeys(names)
                ],
            }
        )

    async def health(self, request: Request) -> Response:
        return JSONResponse(
            {
                "ok": True,
                "hosts": self.router.snapshot(),
                "replay_remaining": self.replayer.remaining if self.replayer else None,
            }
        )

    # ---- request entry points -------------------------------------------------------------
    async def _begin(self, request: Request) -> Call | Response:
        key = self.authenticate(request)
        if key is None:
            return _error(
                401, "unknown API key: use the key the harness gave this trial", "invalid_api_key"
            )
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "request body is not valid JSON", "invalid_request_error")
        if not isinstance(body, dict):
            return _error(400, "request body must be a JSON object", "invalid_request_error")
        requested = str(body.get("model") or "")
        model = self.resolve(requested, key)
        if model is None:
            known = ", ".join(self.config.fleet.models) or "none"
            return _error(
                404,
                f"model {requested!r} is not served by this gateway (models: {known})",
                "model_not_found",
            )
        endpoint = request.url.path
        stream = bool(body.get("stream"))
        include_usage = stream and bool((body.get("stream_options") or {}).get("include_usage"))
        candidates: list[str] = []
        if not self.replayer:
            mm = self.config.fleet.models[model]
            candidates = mm.host_names([h.name for h in self.config.fleet.hosts])
        max_tokens = (
            body.get("max_tokens")
            or body.get("max_completion_tokens")
            or body.get("max_output_tokens")
        )
        job = Job(
            key.trial,
            prompt_estimate(body),
            0
            if endpoint == EMBEDDINGS
            else self.router.expected_completion(
                int(max_tokens) if isinstance(max_tokens, int) else None
            ),
        )
        return Call(
            uuid.uuid4().hex[:12],
            key,
            model,
            requested,
            endpoint,
            body,
            stream,
            include_usage,
            candidates,
            job,
        )

    async def generate(self, request: Request) -> Response:
        """/v1/chat/completions and /v1/completions: streamed from upstream, always."""
        call = await self._begin(request)
        if isinstance(call, Response):
            return call
        if self.replayer:
            return self._replay(call)
        kind = "chat" if call.endpoint == CHAT else "text"
        try:
            opened = await self._with_retries(call, "sse")
        except Final as f:
            return Response(f.body, f.status, media_type=f.content_type)
        except Retryable as exc:
            return self._exhausted(call, exc)
        if not call.stream:
            body = opened.acc.body(kind, call.requested or None)
            self._record(call, kind, opened.acc, body)
            return JSONResponse(body)
        return _Stream(self._relay(call, kind, opened), lambda: self._abandon(opened))

    async def passthrough(self, request: Request) -> Response:
        """/v1/embeddings and /v1/responses: forwarded as they are, with the model mapped."""
        call = await self._begin(request)
        if isinstance(call, Response):
            return call
        if self.replayer:
            return self._replay(call)
        mode = "raw" if call.stream else "json"
        try:
            opened = await self._with_retries(call, mode)
        except Final as f:
            return Response(f.body, f.status, media_type=f.content_type)
        except Retryable as exc:
            return self._exhausted(call, exc)
        if mode == "json":
            body = opened.json_body or {}
            if call.requested and "model" in body:
                body["model"] = call.requested
            if self.recorder:
                self.recorder.add(call.endpoint, call.body, {"raw": body}, self._meta(opened))
            return JSONResponse(body)
        return _Stream(self._relay_raw(call, opened), lambda: self._abandon(opened))

    def _exhausted(self, call: Call, exc: Retryable) -> Response:
        detail = "; ".join(call.errors) or str(exc)
        if isinstance(exc, NoHost):
            wait = self.router.time_until_available(call.candidates)
            return _error(
                503,
                f"no fleet host is available for {call.model!r}: {detail}",
                "fleet_unavailable",
                {"Retry-After": f"{max(1, round(wait))}"},
            )
        if exc.status and exc.body:
            headers = {k: v for k, v in exc.headers.items() if k.lower() == "retry-after"}
            return Response(exc.body, exc.status, headers=headers, media_type="application/json")
        return _error(502, f"no fleet host could serve {call.model!r}: {detail}", "fleet_error")

    # ---- attempts -------------------------------------------------------------------------
    async def _with_retries(self, call: Call, mode: str) -> Opened:
        r = self.config.fleet.routing

        def wait(state: RetryCallState) -> float:
            # another host is usually free at once; else wait out the shortest cooldown
            # (a 429's Retry-After included)
            return min(self.router.time_until_available(call.candidates), r.max_wait_s)

        retrying = AsyncRetrying(
            stop=stop_after_attempt(r.max_attempts),
            retry=retry_if_exception_type(Retryable),
            wait=wait,
            reraise=True,
        )
        async for attempt in retrying:
            with attempt:
                return await self._attempt(call, mode, attempt.retry_state.attempt_number - 1)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _attempt(self, call: Call, mode: str, retry: int) -> Opened:
        choice = self.router.choose(call.candidates, call.job, exclude=call.tried)
        if choice is None:
            raise NoHost("every host is cooling down")
        host = self.config.fleet.host(choice.host)
        upstream = self.config.fleet.models[call.model].upstream_for(host.name)
        call.tried.append(host.name)
        token = object()
        had_slot = self.router.begin(host.name, token, call.job, choice.expected_s)
        self.energy[host.name].start(token, time.monotonic())
        att = Attempt(call, host.name, upstream, retry, had_slot, token=token)
        try:
            return await self._send(att, host, mode)
        except BaseException as exc:  # cancelled, or a bug: never leave a call in flight
            if att.token is not None:
                att.status = att.status or "gateway_error"
                att.error = att.error or f"{type(exc).__name__}: {exc}"
                att.incomplete = True
                self._finish(att)
            raise

    async def _send(self, att: Attempt, host: Host, mode: str) -> Opened:
        call = att.call
        body = {**call.body, "model": att.upstream}
        if mode == "sse":
            body["stream"] = True
            body["stream_options"] = {
                **(call.body.get("stream_options") or {}),
                "include_usage": True,
            }
        assert self.client is not None
        req = self.client.build_request(
            "POST", host.base_url + call.endpoint, json=body, headers=host.headers()
        )
        try:
            resp = await self.client.send(req, stream=True)
        except httpx.HTTPError as exc:
            self._fail(att, "connect_error", f"{type(exc).__name__}: {exc}")
            raise Retryable(f"{host.name}: {type(exc).__name__}") from exc
        if resp.status_code != 200:
            content = await resp.aread()
            await resp.aclose()
            if resp.status_code in RETRYABLE_STATUS:
                ra = retry_after_seconds(resp.headers.get("retry-after"))
                self._fail(att, resp.status_code, _snippet(content), retry_after=ra)
                raise Retryable(
                    f"{host.name}: HTTP {resp.status_code}",
                    resp.status_code,
                    content,
                    dict(resp.headers),
                )
            att.status, att.error = resp.status_code, _snippet(content)
            self._finish(att)
            raise Final(resp.status_code, content, resp.headers.get("content-type"))
        opened = Opened(att, resp, None, [], wire.ChunkAccumulator())
        try:
            if mode == "json":
                opened.json_body = json.loads(await resp.aread())
                att.usage = (opened.json_body or {}).get("usage")
                att.status = 200
                await resp.aclose()
                self._finish(att)
                return opened
            opened.lines = resp.aiter_lines()
            # read up to the first event: a host that fails before it is retried
            while not opened.events:
                ev = opened.decoder.feed(await anext(opened.lines))
                if ev is not None:
                    opened.events.append(ev)
                    if mode == "sse":
                        self._take_chunk(att, opened.acc, ev[1])
            if mode == "sse" and not call.stream:
                await self._drain(opened)
                await resp.aclose()
                att.status = 200
                self._finish(att)
        except (httpx.HTTPError, StopAsyncIteration, ValueError) as exc:
            await _close(resp)
            msg = (
                "stream ended early"
                if isinstance(exc, StopAsyncIteration)
                else f"{type(exc).__name__}: {exc}"
            )
            self._fail(att, "broken", msg)
            raise Retryable(f"{host.name}: {msg}") from exc
        return opened

    def _take_chunk(self, att: Attempt, acc: wire.ChunkAccumulator, data: str) -> dict | None:
        if data.strip() == "[DONE]":
            att.done = True
            return None
        chunk = json.loads(data)
        if chunk.get("error"):
            raise httpx.RemoteProtocolError(f"upstream error event: {_snippet(data)}")
        att.mark_chunk(wire.has_output(chunk))
        acc.add(chunk)
        if chunk.get("usage"):
            att.usage = chunk["usage"]
        return chunk

    async def _drain(self, opened: Opened) -> None:
        """Read a non-streamed call's upstream stream to its end (or raise)."""
        assert opened.lines is not None
        att = opened.attempt
        async for line in opened.lines:
            ev = opened.decoder.feed(line)
            if ev is not None:
                self._take_chunk(att, opened.acc, ev[1])
                if att.done:
                    await _finish_body(opened)
                    return
        ev = opened.decoder.flush()
        if ev is not None:
            self._take_chunk(att, opened.acc, ev[1])
        if not att.done and not opened.acc.finished():
            raise httpx.RemoteProtocolError("upstream stream ended without finishing")

    # ---- streaming to the client ----------------------------------------------------------
    def _client_chunk(self, call: Call, chunk: dict) -> dict | None:
        if call.requested:
            chunk["model"] = call.requested
        if chunk.get("usage") and not call.include_usage:
            if not chunk.get("choices"):
                return None
            chunk = {k: v for k, v in chunk.items() if k != "usage"}
        return chunk

    async def _relay(self, call: Call, kind: str, opened: Opened) -> AsyncIterator[bytes]:
        att, acc = opened.attempt, opened.acc
        sent = 0
        try:
            for _, data in opened.events:  # already taken in by _send
                if data.strip() != "[DONE]":
                    out = self._client_chunk(call, json.loads(data))
                    if out is not None:
                        yield wire.sse_bytes(out)
                        sent += 1
            assert opened.lines is not None
            while not att.done:
                try:
                    ev = opened.decoder.feed(await anext(opened.lines))
                except StopAsyncIteration:
                    ev = opened.decoder.flush()
                    if ev is None:
                        break
                if ev is None:
                    continue
                chunk = self._take_chunk(att, acc, ev[1])
                out = self._client_chunk(call, chunk) if chunk is not None else None
                if out is not None:
                    yield wire.sse_bytes(out)
                    sent += 1
            if not att.done and not acc.finished():
                raise httpx.RemoteProtocolError("upstream stream ended without finishing")
            att.status = 200
            await _finish_body(opened)
            # the line is written before the last byte leaves: a client that has its
            # reply finds its telemetry already there
            self._finish(att)
            self._record(call, kind, acc, None)
            yield wire.DONE
        except (httpx.HTTPError, ValueError) as exc:
            att.status, att.incomplete = 200, True
            att.error = (
                f"stream broke after {sent} chunk(s) reached the client: "
                f"{type(exc).__name__}: {exc}"
            )
            self.router.failed(att.host)
            self._finish(att)
            yield wire.sse_bytes(
                {
                    "error": {
                        "message": f"harness gateway: upstream host {att.host} broke the "
                        f"stream after {sent} chunk(s); the reply is incomplete. Retry the "
                        "request.",
                        "type": "upstream_incomplete",
                        "code": "upstream_incomplete",
                    }
                }
            )
        except BaseException:  # client went away (cancelled) or worse
            att.status, att.incomplete = att.status or 200, True
            att.error = att.error or "client disconnected before the stream ended"
            raise
        finally:
            self._finish(att)
            if opened.response is not None:
                with contextlib.suppress(BaseException):
                    await opened.response.aclose()

    async def _relay_raw(self, call: Call, opened: Opened) -> AsyncIterator[bytes]:
        """/v1/responses streams: events forwarded as they are; usage from the last one."""
        att = opened.attempt
        decoder = opened.decoder
        events: list[list[Any]] = []

        def note(ev: tuple[str | None, str]) -> bytes:
            name, data = ev
            with contextlib.suppress(ValueError):
                obj = json.loads(data)
                if isinstance(obj, dict):
                    typ = str(obj.get("type", name or ""))
                    att.mark_chunk("delta" in typ)
                    resp = obj.get("response")
                    if isinstance(resp, dict) and resp.get("usage"):
                        att.usage = resp["usage"]
                    events.append([name, obj])
            return wire.sse_bytes(data, name)

        held: bytes | None = None  # the last event waits until the line is written
        try:
            for ev in opened.events:
                held = note(ev)
            assert opened.lines is not None
            async for line in opened.lines:
                ev = decoder.feed(line)
                if ev is not None:
                    if held is not None:
                        yield held
                    held = note(ev)
            ev = decoder.flush()
            if ev is not None:
                if held is not None:
                    yield held
                held = note(ev)
            att.status = 200
            self._finish(att)
            if self.recorder:
                self.recorder.add(call.endpoint, call.body, {"events": events}, self._meta(opened))
            if held is not None:
                yield held
        except httpx.HTTPError as exc:
            att.status, att.incomplete = 200, True
            att.error = f"{type(exc).__name__}: {exc}"
            self.router.failed(att.host)
            self._finish(att)
            if held is not None:
                yield held
            yield wire.sse_bytes(
                {
                    "type": "error",
                    "error": {
                        "message": f"harness gateway: upstream host {att.host} broke the stream; "
                        "the reply is incomplete",
                        "type": "upstream_incomplete",
                    },
                },
                "error",
            )
        except BaseException:
            att.status, att.incomplete = att.status or 200, True
            att.error = att.error or "client disconnected before the stream ended"
            raise
        finally:
            self._finish(att)
            if opened.response is not None:
                with contextlib.suppress(BaseException):
                    await opened.response.aclose()

    # ---- bookkeeping ----------------------------------------------------------------------
    async def _abandon(self, opened: Opened) -> None:
        """After a streamed reply: if the relay never ran to its end (the client left before
        the first byte), still free the host, write the line and close upstream."""
        att = opened.attempt
        if att.token is not None:
            att.status, att.incomplete = att.status or 200, True
            att.error = att.error or "client disconnected before the stream began"
            self._finish(att)
        if opened.response is not None:
            await _close(opened.response)

    def _fail(
        self, att: Attempt, status: int | str, error: str, retry_after: float | None = None
    ) -> None:
        att.status, att.error = status, error
        att.call.errors.append(f"{att.host}: {status} {error}".strip())
        self.router.failed(att.host, retry_after)
        self._finish(att)

    def _finish(self, att: Attempt) -> None:
        token, att.token = att.token, None
        if token is None:
            return  # already finished
        now = time.monotonic()
        total = now - att.t0
        self.router.end(att.host, token)
        busy = self.energy[att.host].stop(token, now)
        prompt, cached, completion = wire.usage_numbers(att.usage)
        ttft = att.ttft_s if att.ttft_s is not None else att.first_chunk_s
        prefill, decode = rates(prompt, cached, completion, ttft, total)
        ok = att.status == 200 and not att.incomplete
        if ok:
            self.router.succeeded(
                att.host,
                att.call.key.trial,
                prompt=prompt,
                cached=cached,
                completion=completion,
                ttft_s=ttft,
                total_s=total,
                had_slot=att.had_slot,
            )
        host = self.config.fleet.host(att.host)
        kwh = energy_kwh(busy, host.watts)
        tcost = token_cost(
            self.config.price_for(att.call.model, att.upstream), prompt, cached, completion
        )
        ecost = kwh * self.config.kwh_price
        self.telemetry.write(
            {
                "ts": round(att.ts, 6),
                "call": att.call.call_id,
                "trial": att.call.key.trial,
                "agent": att.call.key.agent,
                "model": att.call.model,
                "requested_model": att.call.requested,
                "endpoint": att.call.endpoint,
                "stream": att.call.stream,
                "host": att.host,
                "upstream": att.upstream,
                "artefact": self.artefact(att.host, att.upstream),
                "prompt_tokens": prompt,
                "cached_tokens": cached,
                "completion_tokens": completion,
                "ttft_s": _r(ttft),
                "total_s": _r(total),
                "prefill_tps": _r(prefill, 1),
                "decode_tps": _r(decode, 1),
                "status": att.status,
                "error": att.error,
                "incomplete": att.incomplete,
                "retry": att.retry,
                "busy_s": _r(busy),
                "energy_kwh": round(kwh, 9),
                "token_cost_usd": round(tcost, 9),
                "energy_cost_usd": round(ecost, 9),
                "cost_usd": round(tcost + ecost, 9),
            }
        )

    def _meta(self, opened: Opened) -> dict:
        a = opened.attempt
        return {"host": a.host, "upstream": a.upstream, "stream": a.call.stream}

    def _record(self, call: Call, kind: str, acc: wire.ChunkAccumulator, body: dict | None) -> None:
        if not self.recorder:
            return
        body = body or acc.body(kind, call.requested or None)
        choice = (body.get("choices") or [{}])[0]
        resp: dict[str, Any] = {"finish_reason": choice.get("finish_reason")}
        if kind == "chat":
            resp["message"] = {
                k: v
                for k, v in (choice.get("message") or {}).items()
                if k != "role" and v is not None
            }
        else:
            resp["text"] = choice.get("text", "")
        if body.get("usage"):
            resp["usage"] = body["usage"]
        self.recorder.add(call.endpoint, call.body, resp, {"stream": call.stream})

    # ---- replay ---------------------------------------------------------------------------
    def _replay(self, call: Call) -> Response:
        assert self.replayer is not None
        t0, ts = time.monotonic(), time.time()
        line = {
            "ts": round(ts, 6),
            "call": call.call_id,
            "trial": call.key.trial,
            "agent": call.key.agent,
            "model": call.model,
            "requested_model": call.requested,
            "endpoint": call.endpoint,
            "stream": call.stream,
            "host": "replay",
            "upstream": None,
            "artefact": None,
            "retry": 0,
            "incomplete": False,
        }
        try:
            index, item = self.replayer.next(call.endpoint, call.body)
        except (CassetteMismatch, CassetteExhausted) as exc:
            kind = (
                "cassette_mismatch" if isinstance(exc, CassetteMismatch) else "cassette_exhausted"
            )
            self.telemetry.write(
                {**line, "status": 400, "error": str(exc), "total_s": _r(time.monotonic() - t0)}
            )
            return _error(400, f"harness gateway replay: {exc}", kind)
        status, payload = replay_payload(item["response"], call)
        usage = None
        if isinstance(payload, list):
            usage = next(
                (
                    c.get("usage")
                    for c in reversed(payload)
                    if isinstance(c, dict) and c.get("usage")
                ),
                None,
            )
        elif isinstance(payload, dict):
            usage = payload.get("usage") or (payload.get("response") or {}).get("usage")
        prompt, cached, completion = wire.usage_numbers(usage or item["response"].get("usage"))
        price = self.config.price_for(call.model, None)
        tcost = token_cost(price, prompt, cached, completion)
        self.telemetry.write(
            {
                **line,
                "status": status,
                "prompt_tokens": prompt,
                "cached_tokens": cached,
                "completion_tokens": completion,
                "ttft_s": 0.0,
                "total_s": _r(time.monotonic() - t0),
                "cassette_index": index,
                "token_cost_usd": round(tcost, 9),
                "cost_usd": round(tcost, 9),
                "energy_kwh": 0.0,
            }
        )
        if status != 200 or not isinstance(payload, list):
            return JSONResponse(payload, status_code=status)

        def chunks() -> list[bytes]:
            out = []
            for c in payload:
                if isinstance(c, list):  # a responses event: [event name, data]
                    out.append(wire.sse_bytes(c[1], c[0]))
                    continue
                c = self._client_chunk(call, dict(c))
                if c is not None:
                    out.append(wire.sse_bytes(c))
            if call.endpoint in (CHAT, COMPLETIONS):
                out.append(wire.DONE)
            return out

        async def gen() -> AsyncIterator[bytes]:
            for b in chunks():
                yield b

        return StreamingResponse(gen(), media_type="text/event-stream")


def replay_payload(resp: dict, call: Call) -> tuple[int, Any]:
    """The reply for a cassette ``response``: (status, body dict or list of chunks)."""
    if resp.get("status", 200) != 200 or "error" in resp:
        err = resp.get("error") or "replayed error"
        body = (
            err
            if isinstance(err, dict) and "error" in err
            else {
                "error": err
                if isinstance(err, dict)
                else {"message": str(err), "type": "replayed_error"}
            }
        )
        return int(resp.get("status", 500)), body
    model = call.requested or call.model
    if call.endpoint == RESPONSES and call.stream and "events" in resp:
        return 200, [list(e) for e in resp["events"]]
    if call.endpoint not in (CHAT, COMPLETIONS):
        return 200, resp.get("raw", resp)
    kind = "chat" if call.endpoint == CHAT else "text"
    if "chunks" in resp or "raw" in resp:
        if "chunks" in resp:
            acc = wire.ChunkAccumulator()
            for c in resp["chunks"]:
                acc.add(c)
            raw = acc.body(kind, model)
            if call.stream:
                return 200, [dict(c) for c in resp["chunks"]]
        else:
            raw = dict(resp["raw"])
            raw["model"] = model
        choice = (raw.get("choices") or [{}])[0]
        resp = {
            "usage": raw.get("usage"),
            "finish_reason": choice.get("finish_reason"),
            **(
                {"message": choice.get("message") or {}}
                if kind == "chat"
                else {"text": choice.get("text", "")}
            ),
        }
        if not call.stream:
            return 200, raw
    usage = resp.get("usage")
    if kind == "text":
        text = str(resp.get("text", ""))
        usage = usage or _usage_estimate(call.body.get("prompt"), text)
        return 200, wire.text_reply(
            text,
            model=model,
            usage=usage,
            finish_reason=resp.get("finish_reason") or "stop",
            stream=call.stream,
            include_usage=call.include_usage,
        )
    message = resp.get("message") or {
        k: resp[k] for k in ("content", "tool_calls", "reasoning_content") if k in resp
    }
    usage = usage or _usage_estimate(call.body.get("messages"), message)
    if call.stream:
        return 200, wire.message_chunks(
            message,
            model=model,
            usage=usage,
            include_usage=True,
            finish_reason=resp.get("finish_reason"),
        )
    return 200, wire.message_reply(
        message, model=model, usage=usage, finish_reason=resp.get("finish_reason")
    )


def _usage_estimate(prompt: Any, output: Any) -> dict:
    p, c = wire.estimate_tokens(prompt), wire.estimate_tokens(output)
    return {
        "prompt_tokens": p,
        "completion_tokens": c,
        "total_tokens": p + c,
        "prompt_tokens_details": {"cached_tokens": 0},
    }


def _snippet(content: bytes | str, limit: int = 300) -> str:
    text = content.decode("utf-8", "replace") if isinstance(content, bytes) else content
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _r(value: float | None, nd: int = 4) -> float | None:
    return None if value is None else round(value, nd)


class _Stream(StreamingResponse):
    """An SSE reply that runs ``on_close`` however it ends (even if never iterated)."""

    def __init__(self, content: AsyncIterator[bytes], on_close: Any) -> None:
        super().__init__(
            content, media_type="text/event-stream", headers={"Cache-Control": "no-cache"}
        )
        self._on_close = on_close

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            with contextlib.suppress(Exception):  # runs the relay's own finally, if it began
                await self.body_iterator.aclose()  # type: ignore[attr-defined]
            await self._on_close()


async def _finish_body(opened: Opened) -> None:
    """Read what follows ``[DONE]`` (the end of the chunked body), so that the upstream
    connection goes back to the pool instead of being closed: a new TCP connection per
    call costs more than the rest of the gateway's work."""
    if opened.lines is None:
        return
    with contextlib.suppress(httpx.HTTPError, StopAsyncIteration):
        async for _ in opened.lines:
            pass


async def _close(resp: httpx.Response) -> None:
    with contextlib.suppress(Exception):
        await resp.aclose()


# ---- running it ---------------------------------------------------------------------------
def build_config(
    fleet: FleetConfig | str | Path | None = None,
    *,
    prices: dict[str, Price | dict] | None = None,
    price_per_kwh: float | None = None,
    telemetry: str | Path | None = None,
    record: str | Path | None = None,
    replay: str | Path | None = None,
    keys_file: str | Path | None = None,
    require_keys: bool = True,
    bench: dict[str, dict[str, float]] | None = None,
) -> GatewayConfig:
    if fleet is None:
        fleet_cfg = FleetConfig()
    elif isinstance(fleet, FleetConfig):
        fleet_cfg = fleet
    else:
        fleet_cfg = load_fleet(fleet)
    if not fleet_cfg.hosts and not replay:
        raise UserError(
            "the fleet has no hosts",
            file=fleet_cfg.source,
            field="hosts",
            fix="list at least one host, or use --replay FILE",
        )
    table = {
        k: v if isinstance(v, Price) else Price.model_validate(v) for k, v in (prices or {}).items()
    }
    if keys_file:
        load_keys(keys_file)  # fail at start on a broken file; the gateway re-reads it
    return GatewayConfig(
        fleet=fleet_cfg,
        prices=table,
        price_per_kwh=price_per_kwh,
        telemetry_path=telemetry,
        record_path=record,
        replay_path=replay,
        keys_file=keys_file,
        require_keys=require_keys,
        bench=bench,
    )


class GatewayServer:
    """The gateway in a background thread, for the trial runner and the tests.

    with GatewayServer(fleet_cfg, prices={...}, telemetry="t.jsonl") as gw:
        key = gw.issue_key("trial-1", "mini-swe-agent", "qwen3-coder")
        ... agent uses gw.base_url with key ...
        gw.trial_usage("trial-1")
    """

    def __init__(
        self,
        fleet: FleetConfig | str | Path | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        **options: Any,
    ) -> None:
        options.setdefault("require_keys", True)
        self.config = build_config(fleet, **options)
        self.gateway = Gateway(self.config)
        self._server = ThreadedServer(self.gateway.app, host, port)

    @property
    def port(self) -> int:
        return self._server.port

    @property
    def url(self) -> str:
        return self._server.url

    @property
    def base_url(self) -> str:
        """What an OpenAI client takes as ``base_url``."""
        return self.url + "/v1"

    def start(self) -> GatewayServer:
        self._server.start(timeout=30)
        return self

    def stop(self) -> None:
        self._server.stop()

    def __enter__(self) -> GatewayServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def issue_key(self, trial_id: str, agent: str | None = None, model: str | None = None) -> str:
        return self.gateway.issue_key(trial_id, agent, model)

    def trial_usage(self, trial_id: str) -> dict[str, Any]:
        return self.gateway.telemetry.trial_usage(trial_id)

    def telemetry(self, trial_id: str | None = None) -> list[dict]:
        return self.gateway.telemetry.records(trial_id)

    def fingerprint(self) -> dict[str, Any]:
        """The fleet fingerprint as probed when the gateway started."""
        return self.gateway.fingerprint()

    def hosts(self) -> dict[str, Any]:
        """Router state per host: rates, slots, in flight, cooldowns, failures."""
        return self.gateway.router.snapshot()


def serve(config: GatewayConfig, host: str = "127.0.0.1", port: int = 8080) -> None:
    """Run the gateway in the foreground until interrupted."""
    import uvicorn

    gateway = Gateway(config)
    uvicorn.run(gateway.app, host=host, port=port, log_level="warning", timeout_graceful_shutdown=5)


def main() -> None:
    from harness.fleet.cli import gateway_app

    gateway_app(prog_name="python -m harness.fleet.gateway")


if __name__ == "__main__":
    main()
