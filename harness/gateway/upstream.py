"""Upstreams: where the gateway gets its answers.

``FleetUpstream`` asks the routing for a host and sends the call as the client asked for
it: a streamed call is streamed from the host with ``stream_options.include_usage`` (so
that the gateway measures time to first token and total time itself), a non-streamed one
is sent non-streamed (one JSON reply: the cheapest path; its time to first token is what
the host reports, see ``host_times.py``). Connect errors, 5xx and 429 are retried on
another host while nothing has reached the client; rate limits (429) are waited out against
a wall-clock budget (``routing.retry_budget_s``, a host's Retry-After honoured in full), and
a 429 that outlives it is a harness fault: the trial ends as ``error``.
``CassetteUpstream`` (``replay.py``) serves recorded traffic.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any, Protocol

import httpx
from starlette.responses import JSONResponse, Response

from harness.fleet import wire
from harness.fleet.config import FleetConfig, Host
from harness.fleet.lease import Routing
from harness.fleet.probe import HostStatus, probe_fleet_async
from harness.gateway.accounting import STREAM_BROKEN, Accounting
from harness.gateway.bodies import streamed_with_usage, with_model
from harness.gateway.calls import (
    CHAT,
    COMPLETIONS,
    RETRYABLE_STATUS,
    Attempt,
    Call,
    Final,
    NoHost,
    Opened,
    Retryable,
    error_response,
    retry_after_seconds,
    snippet,
)
from harness.gateway.host_times import engine_timings, reported_ttft_s
from harness.gateway.messages import ANTHROPIC_VERSION, MESSAGES, from_usage
from harness.gateway.relay import (
    ChatFraming,
    EventFraming,
    close_response,
    stream_reply,
    take_chunk,
)
from harness.gateway.sends import coalesce_requests

JSON_TYPE = {"content-type": "application/json"}


class Upstream(Protocol):
    """Answers calls; the app knows nothing of hosts or cassettes."""

    def candidates(self, model: str) -> list[str]: ...

    def resolve(self, requested: str, pinned: str | None, agent: str | None) -> str | None: ...

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    async def answer(self, call: Call) -> Response: ...

    async def health(self) -> dict[str, Any]: ...


class FleetUpstream:
    def __init__(
        self,
        fleet: FleetConfig,
        routing: Routing,
        accounting: Accounting,
        statuses: dict[str, HostStatus],
        probe_timeout_s: float = 3.0,
    ) -> None:
        self.fleet = fleet
        self.routing = routing
        self.accounting = accounting
        self.statuses = statuses  # shared with the gateway: artefacts for telemetry
        self.probe_timeout_s = probe_timeout_s
        self.client: httpx.AsyncClient | None = None

    # ---- lifecycle ------------------------------------------------------------------------
    async def start(self) -> None:
        r = self.fleet.routing
        self.client = httpx.AsyncClient(
            timeout=httpx.Timeout(r.read_timeout_s, connect=r.connect_timeout_s),
            # idle connections dropped before a host's server drops them (Node's and
            # uvicorn's default is 5 s, as is httpx's): sending on one the host is closing
            # that instant fails as a ReadError before any header comes back
            limits=httpx.Limits(
                max_connections=1000, max_keepalive_connections=200, keepalive_expiry=2.0
            ),
        )
        coalesce_requests(self.client)  # a request's head and body in one send
        if self.fleet.hosts:
            await self.probe()

    async def stop(self) -> None:
        if self.client is not None:
            await self.client.aclose()

    async def probe(self) -> dict[str, HostStatus]:
        """Ask every host what it serves; learn artefacts and parallel slots."""
        self.statuses.clear()
        self.statuses.update(await probe_fleet_async(self.fleet, self.probe_timeout_s))
        for h in self.fleet.hosts:
            st = self.statuses.get(h.name)
            if h.max_parallel is None and st:
                slots = [m.parallel for m in st.models.values() if m.parallel]
                if slots:
                    self.routing.learn_slots(h.name, max(slots))
        return self.statuses

    async def health(self) -> dict[str, Any]:
        return {"hosts": await self.routing.snapshot(), "replay_remaining": None}

    # ---- models ---------------------------------------------------------------------------
    def resolve(self, requested: str, pinned: str | None, agent: str | None) -> str | None:
        return self.fleet.resolve_model(requested, agent, pinned)

    def candidates(self, model: str) -> list[str]:
        return self.fleet.models[model].host_names([h.name for h in self.fleet.hosts])

    # ---- answering ------------------------------------------------------------------------
    async def answer(self, call: Call) -> Response:
        if call.endpoint in (CHAT, COMPLETIONS):
            return await self._generate(call)
        return await self._passthrough(call)

    async def _generate(self, call: Call) -> Response:
        """Chat and text completions: streamed from upstream when the client streams,
        else one JSON reply from upstream."""
        try:
            opened = await self._with_retries(call, "sse" if call.stream else "json")
        except Final as f:
            return Response(f.body, f.status, media_type=f.content_type)
        except Retryable as exc:
            return await self._exhausted(call, exc)
        if not call.stream:
            body = opened.json_body or {}
            reply = relayed(opened, call.requested or None)
            if call.requested:
                body["model"] = call.requested
            self.accounting.record_reply(call, None, body)
            return reply or JSONResponse(body)
        return stream_reply(opened, ChatFraming(call, opened, self.accounting), self.accounting)

    async def _passthrough(self, call: Call) -> Response:
        """Embeddings and responses: forwarded as they are, with the model mapped."""
        mode = "raw" if call.stream else "json"
        try:
            opened = await self._with_retries(call, mode)
        except Final as f:
            return Response(f.body, f.status, media_type=f.content_type)
        except Retryable as exc:
            return await self._exhausted(call, exc)
        if mode == "json":
            body = opened.json_body or {}
            reply = relayed(opened, call.requested if "model" in body else None)
            if call.requested and "model" in body:
                body["model"] = call.requested
            a = opened.attempt
            meta = {"host": a.host, "upstream": a.upstream, "stream": call.stream}
            self.accounting.record(call, {"raw": body}, meta)
            return reply or JSONResponse(body)
        return stream_reply(opened, EventFraming(call, opened, self.accounting), self.accounting)

    async def _exhausted(self, call: Call, exc: Retryable) -> Response:
        detail = "; ".join(call.errors) or str(exc)
        fault = harness_fault(call) or rate_limit_fault(call, self.fleet.routing.retry_budget_s)
        if fault is not None:  # no host could ever answer: stop the trial, not the agent
            self.accounting.fault(call.key.trial, fault)
        self.accounting.transcribe(call, error=fault or detail)
        if isinstance(exc, NoHost):
            wait = await self.routing.wait_s(call.candidates)
            return error_response(
                503,
                f"no fleet host is available for {call.model!r}: {detail}",
                "fleet_unavailable",
                {"Retry-After": f"{max(1, round(wait))}"},
            )
        if exc.status and exc.body:
            headers = {k: v for k, v in exc.headers.items() if k.lower() == "retry-after"}
            return Response(exc.body, exc.status, headers=headers, media_type="application/json")
        return error_response(
            502, f"no fleet host could serve {call.model!r}: {detail}", "fleet_error"
        )

    # ---- attempts -------------------------------------------------------------------------
    async def _with_retries(self, call: Call, mode: str) -> Opened:
        """Attempts on hosts: up to ``max_attempts`` for failures, and for rate limits
        (429) as long as the wall-clock ``retry_budget_s`` lasts (a Retry-After waited in
        full; one longer than what is left of the budget ends the retries at once)."""
        r = self.fleet.routing
        started = time.monotonic()
        n = 0
        while True:
            try:
                return await self._attempt(call, mode, n)
            except Retryable as exc:
                n += 1
                limited = exc.status == 429 or (isinstance(exc, NoHost) and rate_limited(call))
                if set(call.candidates) <= set(call.tried) and harness_fault(call):
                    raise  # every host is down or lacks the model: waiting will not help
                if not limited and n >= r.max_attempts:
                    raise
                # another host is usually free at once; else wait out the shortest
                # cooldown (a 429's Retry-After included)
                wait = await self.routing.wait_s(call.candidates)
                if limited:
                    spent = time.monotonic() - started
                    if spent + wait > r.retry_budget_s:
                        call.rate_limited_s = spent
                        raise
                else:
                    wait = min(wait, r.max_wait_s)
            if wait > 0:
                await asyncio.sleep(wait)

    async def _attempt(self, call: Call, mode: str, retry: int) -> Opened:
        try:
            lease = await self.routing.acquire(call.candidates, call.job, call.tried)
        except httpx.HTTPError as exc:  # a job's shared router that has gone away
            call.errors.append(f"router: {type(exc).__name__}: {exc}")
            raise Retryable(f"the job's router is unreachable: {exc}") from exc
        if lease is None:
            raise NoHost("every host is cooling down")
        host = self.fleet.host(lease.host)
        upstream = self.fleet.models[call.model].upstream_for(host.name)
        call.tried.append(host.name)
        att = Attempt(call, host.name, upstream, retry, lease.had_slot, token=lease)
        self.accounting.start(att)
        try:
            return await self._send(att, host, mode)
        except BaseException as exc:  # cancelled, or a bug: never leave a call in flight
            if att.token is not None:
                att.status = att.status or "gateway_error"
                att.error = att.error or f"{type(exc).__name__}: {exc}"
                att.incomplete = True
                self.accounting.finish(att)
            raise

    def _fail(
        self, att: Attempt, status: int | str, error: str, retry_after: float | None = None
    ) -> None:
        att.status, att.error = status, error
        att.call.errors.append(f"{att.host}: {status} {error}".strip())
        self.accounting.finish(att, failed=True, retry_after=retry_after)

    async def _post(
        self, url: str, body: dict[str, Any] | bytes, headers: dict[str, str]
    ) -> httpx.Response:
        """Send, streamed. A pooled connection the host had closed (llama.cpp's server ends
        some after a streamed reply, unannounced) ends in "disconnected without sending a
        response": not the host failing, so the request goes again, on another connection,
        up to three times before it counts."""
        assert self.client is not None
        for attempt in range(3):
            if isinstance(body, bytes):  # JSON already
                req = self.client.build_request(
                    "POST", url, content=body, headers={**headers, **JSON_TYPE}
                )
            else:
                req = self.client.build_request("POST", url, json=body, headers=headers)
            try:
                return await self.client.send(req, stream=True)
            except httpx.RemoteProtocolError:
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    async def _send(self, att: Attempt, host: Host, mode: str) -> Opened:
        call = att.call
        body = request_body(call, att.upstream, mode)
        assert self.client is not None
        headers = host.headers()
        if call.endpoint == MESSAGES:  # a Messages host: its own auth header and version
            headers = {**headers, "anthropic-version": ANTHROPIC_VERSION}
            if host.api_key():
                headers["x-api-key"] = host.api_key() or ""
        try:
            resp = await self._post(host.base_url + call.endpoint, body, headers)
        except httpx.HTTPError as exc:
            self._fail(att, "connect_error", f"{type(exc).__name__}: {exc}")
            raise Retryable(f"{host.name}: {type(exc).__name__}") from exc
        if resp.status_code != 200:
            content = await resp.aread()
            await resp.aclose()
            if resp.status_code in RETRYABLE_STATUS:
                ra = retry_after_seconds(resp.headers.get("retry-after"))
                self._fail(att, resp.status_code, snippet(content), retry_after=ra)
                raise Retryable(
                    f"{host.name}: HTTP {resp.status_code}",
                    resp.status_code,
                    content,
                    dict(resp.headers),
                )
            att.status, att.error = resp.status_code, snippet(content)
            self.accounting.finish(att)
            raise Final(resp.status_code, content, resp.headers.get("content-type"))
        att.accepted = True
        opened = Opened(att, resp, None, [], wire.ChunkAccumulator())
        try:
            if mode == "json":
                opened.raw_body = await resp.aread()
                opened.json_body = reply_json(call, opened.raw_body)
                att.usage = opened.json_body.get("usage")
                att.timings = engine_timings(opened.json_body)
                if call.endpoint in (CHAT, COMPLETIONS):
                    att.ttft_s = reported_ttft_s(opened.json_body)
                    att.ttft_reported = att.ttft_s is not None
                if call.endpoint == MESSAGES and att.usage:
                    att.usage = from_usage(att.usage)
                att.status = 200
                await resp.aclose()
                self.accounting.finish(att)
                return opened
            opened.lines = resp.aiter_lines()
            # read up to the first event: a host that fails before it is retried
            while not opened.events:
                ev = opened.decoder.feed(await anext(opened.lines))
                if ev is not None:
                    opened.events.append(ev)
                    if mode == "sse":  # taken in once: the relay sends it as parsed here
                        opened.taken = take_chunk(att, opened.acc, ev[1])
        except (httpx.HTTPError, StopAsyncIteration, ValueError) as exc:
            await close_response(resp)
            msg = (
                "stream ended early"
                if isinstance(exc, StopAsyncIteration)
                else f"{type(exc).__name__}: {exc}"
            )
            self._fail(att, STREAM_BROKEN, msg)
            raise Retryable(f"{host.name}: {msg}") from exc
        return opened


def request_body(call: Call, upstream: str, mode: str) -> dict[str, Any] | bytes:
    """What is sent to the host: the call's body with the host's name for the model (and,
    streamed, with ``stream_options.include_usage``), as the client's own bytes where
    only that changes (``bodies.py``), else as a new dict."""
    raw = call.sent_bytes
    if raw is not None:
        raw = with_model(raw, call.body, upstream)
        if raw is not None and mode == "sse":
            raw = streamed_with_usage(raw, call.body)
        if raw is not None:
            return raw
    body = {**call.body, "model": upstream}
    if mode == "sse":
        body["stream"] = True
        body["stream_options"] = {
            **(call.body.get("stream_options") or {}),
            "include_usage": True,
        }
    return body


def relayed(opened: Opened, model: str | None) -> Response | None:
    """The host's JSON reply as its own bytes, with ``model`` (the name the client asked
    for) in place of the host's; None where it must be serialised anew."""
    if opened.raw_body is None or opened.json_body is None:
        return None
    raw = opened.raw_body if not model else with_model(opened.raw_body, opened.json_body, model)
    return None if raw is None else Response(raw, 200, media_type="application/json")


def reply_json(call: Call, content: bytes) -> dict[str, Any]:
    """A host's 200 JSON reply; a body that is not one (cut short, not an object, or a chat
    or text completion without choices) raises ``ValueError``: the host is retried."""
    body = json.loads(content)
    if not isinstance(body, dict):
        raise ValueError(f"upstream reply is not a JSON object: {snippet(content)}")
    if call.endpoint in (CHAT, COMPLETIONS) and not body.get("choices"):
        raise ValueError(f"upstream reply has no choices: {snippet(content)}")
    return body


HOST_DOWN = ("connect_error", "router:", " 404 ")  # unreachable, or the model is not loaded


def rate_limited(call: Call) -> bool:
    """Whether the call's last failure was a rate limit (HTTP 429)."""
    return bool(call.errors) and ": 429 " in f"{call.errors[-1]} "


def rate_limit_fault(call: Call, budget_s: float) -> str | None:
    """A call the fleet kept rate-limiting past the gateway's wall-clock retry budget: a
    harness fault (the trial ends as ``error``), never a reply for the agent to be graded on."""
    if call.rate_limited_s is None and not rate_limited(call):
        return None
    spent = call.rate_limited_s or 0.0
    return (
        f"the fleet rate-limited model {call.model!r} (HTTP 429) beyond the gateway's retry "
        f"budget (waited {spent:.0f} s of routing.retry_budget_s {budget_s:g} s): "
        + "; ".join(call.errors[-3:])
    )


def harness_fault(call: Call) -> str | None:
    """Why no host could answer ``call`` when the harness's configuration is to blame:
    the model has no host, or every attempt found the host unreachable or without the
    model. A busy fleet (429, 503, a broken stream) is not a fault: the agent may retry."""
    if not call.candidates:
        return f"no fleet host serves model {call.model!r}: check the fleet file's models"
    if call.errors and all(any(m in e for m in HOST_DOWN) for e in call.errors):
        return f"the fleet cannot serve model {call.model!r}: " + "; ".join(call.errors)
    return None
