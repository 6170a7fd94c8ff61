"""The cassette upstream: recorded traffic served in order, no host needed (like a scripted
model). A request that does not match its recording is refused with a readable diff."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from starlette.responses import JSONResponse, Response, StreamingResponse

from harness.fleet import wire
from harness.fleet.cassette import (
    CassetteExhausted,
    CassetteMismatch,
    CassetteOfAnotherAgent,
    Replayer,
)
from harness.fleet.config import FleetConfig
from harness.gateway.accounting import Accounting
from harness.gateway.calls import CHAT, COMPLETIONS, RESPONSES, Call, error_response
from harness.gateway.relay import client_chunk


class CassetteUpstream:
    def __init__(self, path: str | Path, fleet: FleetConfig, accounting: Accounting) -> None:
        self.replayer = Replayer(path)
        self.fleet = fleet
        self.accounting = accounting

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None

    async def health(self) -> dict[str, Any]:
        return {"hosts": {}, "replay_remaining": self.replayer.remaining}

    def resolve(self, requested: str, pinned: str | None, agent: str | None) -> str | None:
        if not self.fleet.models:  # replay without a fleet: names pass through
            return requested or pinned
        return self.fleet.resolve_model(requested, agent, pinned)

    def candidates(self, model: str) -> list[str]:
        return []

    async def answer(self, call: Call) -> Response:
        t0, ts = time.monotonic(), time.time()
        try:
            index, item = self.replayer.next(call.endpoint, call.body, call.key.agent)
        except (CassetteMismatch, CassetteExhausted) as exc:
            kind = (
                "cassette_mismatch" if isinstance(exc, CassetteMismatch) else "cassette_exhausted"
            )
            self.accounting.replayed(call, t0, ts, 400, error=str(exc))
            text = fault_text(exc, self.replayer.path.name)
            if isinstance(exc, CassetteOfAnotherAgent):  # the set-up's fault: harness error
                self.accounting.fault(call.key.trial, text)
            else:  # the agent's request is not the recorded one: its own doing
                self.accounting.refuse(call.key.trial, text)
            self.accounting.transcribe(call, error=text)
            return error_response(400, f"harness gateway replay: {exc}", kind)
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
        self.accounting.replayed(
            call, t0, ts, status, usage or item["response"].get("usage"), index
        )
        self.accounting.transcribe(
            call, {k: v for k, v in item["response"].items() if k != "usage"}
        )
        if status != 200 or not isinstance(payload, list):
            return JSONResponse(payload, status_code=status)

        def chunks() -> list[bytes]:
            out = []
            for c in payload:
                if isinstance(c, list):  # a responses event: [event name, data]
                    out.append(wire.sse_bytes(c[1], c[0]))
                    continue
                c = client_chunk(call, dict(c))
                if c is not None:
                    out.append(wire.sse_bytes(c))
            if call.endpoint in (CHAT, COMPLETIONS):
                out.append(wire.DONE)
            return out

        async def gen() -> AsyncIterator[bytes]:
            for b in chunks():
                yield b

        return StreamingResponse(gen(), media_type="text/event-stream")


def fault_text(exc: CassetteMismatch | CassetteExhausted, cassette: str) -> str:
    """One line for the trial: which request, which cassette, the first difference."""
    if isinstance(exc, CassetteExhausted):
        return f"cassette {cassette} exhausted: {exc}"
    first = next((ln[2:] for ln in exc.diff.splitlines() if ln.startswith("- ")), "")
    return (
        f"cassette {cassette} does not match request #{exc.index + 1} ({first}); "
        "is it this scenario's and agent's cassette, and was --model replay given?"
    )


def replay_payload(resp: dict[str, Any], call: Call) -> tuple[int, Any]:
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


def _usage_estimate(prompt: Any, output: Any) -> dict[str, Any]:
    p, c = wire.estimate_tokens(prompt), wire.estimate_tokens(output)
    return {
        "prompt_tokens": p,
        "completion_tokens": c,
        "total_tokens": p + c,
        "prompt_tokens_details": {"cached_tokens": 0},
    }
