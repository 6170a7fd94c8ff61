"""The ASGI app: keys, model names and the OpenAI-compatible routes. Per call it finds the
trial from the bearer key, maps the agent-facing model name to an entrant model, checks
the trial's budget, and hands the call to its upstream (the fleet, or a cassette)."""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import AsyncIterable, AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from harness.config.budget import Budget
from harness.fleet.cassette import Recorder
from harness.fleet.config import FleetConfig, Price
from harness.fleet.lease import LocalRouting, Routing, build_router
from harness.fleet.probe import HostStatus, fingerprint
from harness.fleet.router import Job
from harness.fleet.telemetry import TelemetrySink
from harness.gateway.accounting import Accounting
from harness.gateway.calls import (
    CHAT,
    COMPLETIONS,
    EMBEDDINGS,
    RESPONSES,
    Call,
    KeyInfo,
    cap_output,
    error_response,
    prompt_estimate,
)
from harness.gateway.keys import KeyStore
from harness.gateway.messages_route import messages_routes
from harness.gateway.relay import RelayResponse
from harness.gateway.replay import CassetteUpstream
from harness.gateway.transcript import TRANSCRIPT, Transcript
from harness.gateway.upstream import FleetUpstream, Upstream

BUDGET = "/v1/harness/budget"


async def closing(body: AsyncIterable[Any], done: Callable[[], None]) -> AsyncIterator[Any]:
    """``body`` as it is, then ``done()`` however the stream ends (read through, broken,
    or the client gone); ``body`` is closed first, so its own clean-up runs as before."""
    try:
        async for chunk in body:
            yield chunk
    finally:
        try:
            aclose = getattr(body, "aclose", None)
            if aclose is not None:
                await aclose()
        finally:
            done()


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
    budget: Budget | None = None  # per trial; None: unlimited
    router_url: str | None = None  # a job's shared router; None: a router of its own

    def price_for(self, model: str | None, upstream: str | None) -> Price | None:
        table = {**self.fleet.prices, **self.prices}
        return table.get(model or "") or table.get(upstream or "")

    @property
    def kwh_price(self) -> float:
        return self.fleet.price_per_kwh if self.price_per_kwh is None else self.price_per_kwh


def make_routing(config: GatewayConfig) -> Routing:
    if config.router_url:
        from harness.fleet.router_service import RemoteRouting

        return RemoteRouting(config.router_url)
    return LocalRouting(build_router(config.fleet, config.bench))


class Gateway:
    def __init__(self, config: GatewayConfig, routing: Routing | None = None) -> None:
        self.config = config
        fleet = config.fleet
        self.routing = routing or make_routing(config)
        self.statuses: dict[str, HostStatus] = {}
        self.telemetry = TelemetrySink(config.telemetry_path)
        self.accounting = Accounting(
            telemetry=self.telemetry,
            routing=self.routing,
            price_for=config.price_for,
            kwh_price=config.kwh_price,
            watts={h.name: h.watts for h in fleet.hosts},
            artefact=self.artefact,
            recorder=Recorder(config.record_path) if config.record_path else None,
            budget=config.budget,
            transcript=Transcript(
                Path(config.telemetry_path).parent / TRANSCRIPT if config.telemetry_path else None
            ),
        )
        self.upstream: Upstream
        if config.replay_path:
            self.upstream = CassetteUpstream(config.replay_path, fleet, self.accounting)
        else:
            self.upstream = FleetUpstream(
                fleet, self.routing, self.accounting, self.statuses, config.probe_timeout_s
            )
        self.keys = KeyStore(config.keys, config.keys_file, config.require_keys)
        self.app = Starlette(
            routes=[
                Route("/v1/models", self.models),
                Route(CHAT, self.generate, methods=["POST"]),
                Route(COMPLETIONS, self.generate, methods=["POST"]),
                Route(EMBEDDINGS, self.generate, methods=["POST"]),
                Route(RESPONSES, self.generate, methods=["POST"]),
                *messages_routes(self),
                Route(BUDGET, self.budget),
                Route("/health", self.health),
            ],
            lifespan=self._lifespan,
        )
        self.app.state.gateway = self

    # ---- lifecycle ------------------------------------------------------------------------
    @contextlib.asynccontextmanager
    async def _lifespan(self, app: Starlette) -> AsyncIterator[None]:
        await self.upstream.start()
        try:
            yield
        finally:
            # calls still running (cancelled only after this, if at all): written as cut
            self.accounting.cut_running("the gateway ended with the call in flight")
            await self.upstream.stop()
            await self.routing.aclose()
            self.telemetry.close()
            if self.accounting.transcript is not None:
                self.accounting.transcript.close()
            if self.accounting.recorder:
                self.accounting.recorder.close()

    @property
    def replayer(self) -> Any:
        """The cassette being served, if replaying (None otherwise)."""
        return getattr(self.upstream, "replayer", None)

    def fingerprint(self) -> dict[str, Any]:
        return fingerprint(self.config.fleet, self.statuses)

    def artefact(self, host: str, upstream: str) -> str | None:
        st = self.statuses.get(host)
        info = st.models.get(upstream) if st else None
        return info.quantization if info else None

    # ---- keys and models ------------------------------------------------------------------
    def issue_key(self, trial: str, agent: str | None = None, model: str | None = None) -> str:
        return self.keys.issue(trial, agent, model)

    @staticmethod
    def _token(request: Request) -> str:
        auth = request.headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            return auth[7:].strip()
        return request.headers.get("x-api-key") or ""

    def authenticate(self, request: Request) -> KeyInfo | None:
        return self.keys.lookup(self._token(request))

    async def models(self, request: Request) -> Response:
        key = self.authenticate(request)
        if key is None:
            return error_response(401, "unknown API key", "invalid_api_key")
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
        """Liveness for anyone; hosts and cassette state only for a key holder (when keys
        are required)."""
        if self.keys.require and not self.keys.known(self._token(request)):
            return JSONResponse({"ok": True})
        return JSONResponse({"ok": True, **(await self.upstream.health())})

    async def budget(self, request: Request) -> Response:
        key = self.authenticate(request)
        if key is None:
            return error_response(401, "unknown API key", "invalid_api_key")
        return JSONResponse(self.accounting.budget_state(key.trial))

    # ---- calls ----------------------------------------------------------------------------
    async def _begin(self, request: Request) -> Call | Response:
        key = self.authenticate(request)
        if key is None:
            return error_response(
                401, "unknown API key: use the key the harness gave this trial", "invalid_api_key"
            )
        raw = await request.body()
        try:
            body = json.loads(raw)
        except ValueError:
            return error_response(400, "request body is not valid JSON", "invalid_request_error")
        if not isinstance(body, dict):
            return error_response(
                400, "request body must be a JSON object", "invalid_request_error"
            )
        call = self.begin_call(key, body, request.scope["path"])
        if isinstance(call, Call):  # relayed as it came where only the model changes
            call.raw, call.raw_of = raw, body
        return call

    def begin_call(self, key: KeyInfo, body: dict[str, Any], endpoint: str) -> Call | Response:
        """A call from its key and body (the Messages front calls this with the body it
        translated to chat completions)."""
        requested = str(body.get("model") or "")
        model = self.upstream.resolve(requested, key.model, key.agent)
        if model is None:
            known = ", ".join(self.config.fleet.models) or "none"
            why = f"model {requested!r} is not served by the fleet (models: {known})"
            if requested and requested != key.model:  # a model the agent chose: its failure
                self.accounting.refuse(key.trial, why)
            else:  # the trial's own model: the harness cannot serve it
                self.accounting.fault(key.trial, why)
            return error_response(
                404,
                f"model {requested!r} is not served by this gateway (models: {known})",
                "model_not_found",
            )
        stream = bool(body.get("stream"))
        include_usage = stream and bool((body.get("stream_options") or {}).get("include_usage"))
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
            else self.routing.expected_completion(
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
            self.upstream.candidates(model),
            job,
        )

    async def generate(self, request: Request) -> Response:
        """Every model endpoint: begin the call, check the budget, let the upstream answer."""
        call = await self._begin(request)
        if isinstance(call, Response):
            return call
        return await self.answer_call(call)

    async def answer_call(self, call: Call) -> Response:
        """Check the trial's budget, then let the upstream answer."""
        hit = self.accounting.admit(call)
        if hit is not None:
            state = self.accounting.budget_state(call.key.trial)
            return error_response(
                429,
                f"harness gateway: this trial's {hit} budget is spent "
                f"(used {state['used']}, limit {state['limit']}); no more model calls",
                "budget_exceeded",
                {"x-should-retry": "false"},  # the openai clients would retry a 429
            )
        cap = self.accounting.budget.call_tokens if self.accounting.budget else None
        if cap is not None:  # the trial's per-call limit on generated tokens
            call.body = cap_output(call.body, cap, call.endpoint)
        try:
            resp = await self.upstream.answer(call)
        except BaseException:
            self.accounting.close(call)
            raise
        if not isinstance(resp, StreamingResponse):
            self.accounting.close(call)
            return resp
        done = lambda: self.accounting.close(call)  # noqa: E731 (idempotent)
        resp.body_iterator = closing(resp.body_iterator, done)  # read through, or taken over
        if isinstance(resp, RelayResponse):  # a reply never iterated still ends
            resp.also_on_close(done)
        return resp
