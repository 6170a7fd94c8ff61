"""An LM Studio-compatible model host for tests (never for users).

It speaks the OpenAI endpoints (chat, completions, embeddings, a minimal responses) and
LM Studio's model-info APIs (``/api/v0/models``, ``/api/v1/models``), takes as long as a
host of the configured speed would (prompt/prefill + completion/decode seconds, with up to
``parallel`` requests at once and the rest queued), keeps a prompt-prefix cache (cached
tokens are reported as ``usage.prompt_tokens_details.cached_tokens`` and cost no prefill
time), and injects faults: refused connections, 500, 429 with Retry-After, slowness and
mid-stream drops, set per instance and switchable at run time (``POST /_fault``).

Tokens are 4-character chunks of the rendered prompt, so estimates of len/4 agree.

    python -m harness.testing.lmstudio --port 8101 --prefill 350 --decode 40 --quant Q4_K_M

The host's configuration, faults and state are in ``state.py``; the command line in
``__main__.py``; the app and ``TestHost`` here.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import random
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import asdict
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from harness.testing.lmstudio.state import (
    Faults,
    HostSpec,
    HostState,
    SimulatedDrop,
    _error,
    _QuietDrops,
    _sse,
    _usage,
    chosen_tool,
    count_tokens,
    render,
    reply_tokens,
)
from harness.util.serving import ThreadedServer


async def _cut_body() -> AsyncIterator[bytes]:
    """A JSON reply that stops half way: uvicorn aborts the connection."""
    yield b'{"id": "cut", "object": "chat.completion", "choi'
    raise SimulatedDrop("simulated drop of a non-streamed reply")


def create_app(spec: HostSpec | None = None, faults: Faults | None = None) -> Starlette:
    state = HostState(spec or HostSpec(), faults)

    def model_ok(name: str | None) -> bool:
        return not name or name in state.spec.models

    async def generation(
        request: Request, kind: str, prompt_text: str, body: dict[str, Any]
    ) -> Response:
        s = state.spec
        state.stats["requests"] += 1
        if not model_ok(body.get("model")):
            return _error(404, f"model {body.get('model')!r} is not loaded")
        fault = state.draw_fault()
        if fault == "error":
            state.stats["errors"] += 1
            return _error(500, "simulated internal error")
        if fault == "rate_limit":
            state.stats["rate_limited"] += 1
            return _error(
                429, "simulated rate limit", {"Retry-After": f"{state.faults.retry_after:g}"}
            )
        max_tokens = (
            body.get("max_tokens")
            or body.get("max_completion_tokens")
            or body.get("max_output_tokens")
        )
        n_out = int(max_tokens) if max_tokens and int(max_tokens) > 0 else s.completion_tokens
        tokens = reply_tokens(n_out)
        tool = chosen_tool(body) if kind == "chat" else None
        call_id = f"call-{state.stats['requests']}"
        if tool:  # the reply is a tool call; its arguments are the generated tokens
            args = json.dumps({"command": "echo " + "".join(tokens).strip()})
            step = math.ceil(len(args) / n_out)
            tokens = [args[i : i + step] for i in range(0, len(args), step)]
        stream = bool(body.get("stream"))
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        cid = f"{kind}-{state.stats['requests']}"
        created = int(time.time())
        model = body.get("model") or s.models[0]

        await state.slots.acquire()
        state.active += 1
        state.stats["max_concurrent"] = max(state.stats["max_concurrent"], state.active)
        released = False

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                state.active -= 1
                state.slots.release()

        try:
            prompt = count_tokens(prompt_text)
            cached = min(state.cached_prefix(prompt_text), prompt)
            state.stats["prefill_tokens"] += prompt - cached
            state.stats["cached_tokens"] += cached
            await asyncio.sleep((prompt - cached) / s.prefill + state.faults.slow_s)
            usage = _usage(prompt, cached, n_out)
            reply = "".join(tokens)
            if tool:
                calls = [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": tool, "arguments": reply},
                    }
                ]
                message = {"role": "assistant", "content": None, "tool_calls": calls}
                remembered = prompt_text + render([message])
            elif kind == "chat":
                message = {"role": "assistant", "content": reply}
                remembered = prompt_text + render([message])
            else:
                remembered = prompt_text + reply
        except BaseException:
            release()
            raise

        def chunk(delta_or_text: Any, finish: str | None = None) -> dict[str, Any]:
            if kind == "chat":
                choice = {
                    "index": 0,
                    "delta": delta_or_text,
                    "finish_reason": finish,
                    "logprobs": None,
                }
                obj = "chat.completion.chunk"
            else:
                choice = {
                    "index": 0,
                    "text": delta_or_text,
                    "finish_reason": finish,
                    "logprobs": None,
                }
                obj = "text_completion"
            return {
                "id": cid,
                "object": obj,
                "created": created,
                "model": model,
                "choices": [choice],
            }

        finish = "tool_calls" if tool else ("length" if max_tokens else "stop")
        if not stream:
            try:
                await asyncio.sleep(max(0, n_out - 1) / s.decode)
            finally:
                release()
            if fault == "drop":  # the connection dies before the reply is whole
                state.stats["dropped"] += 1
                return StreamingResponse(_cut_body(), media_type="application/json")
            state.remember(remembered)
            state.stats["ok"] += 1
            state.stats["completion_tokens"] += n_out
            if kind == "chat":
                choice = {
                    "index": 0,
                    "finish_reason": finish,
                    "logprobs": None,
                    "message": message,
                }
                obj = "chat.completion"
            else:
                choice = {"index": 0, "finish_reason": finish, "logprobs": None, "text": reply}
                obj = "text_completion"
            return JSONResponse(
                {
                    "id": cid,
                    "object": obj,
                    "created": created,
                    "model": model,
                    "choices": [choice],
                    "usage": usage,
                    # as llama.cpp's server reports them (prompt_ms: the time to first token)
                    "timings": {
                        "prompt_n": prompt - cached,
                        "prompt_ms": round((prompt - cached) / s.prefill * 1000, 3),
                        "predicted_n": n_out,
                        "predicted_ms": round(max(0, n_out - 1) / s.decode * 1000, 3),
                    },
                }
            )

        per_chunk = max(1, math.ceil(s.decode * 0.01))  # about one chunk every 10 ms

        async def body_iter() -> AsyncIterator[bytes]:
            try:
                t0 = time.monotonic()
                sent = 0
                n_chunks = 0
                while sent < len(tokens):
                    part = tokens[sent : sent + per_chunk]
                    if sent:  # the first token comes with prefill
                        due = t0 + (sent + len(part) - 1) / s.decode
                        await asyncio.sleep(max(0.0, due - time.monotonic()))
                    text = "".join(part)
                    if tool:
                        fn: dict[str, Any] = {"arguments": text}
                        head: dict[str, Any] = {"index": 0}
                        if sent == 0:
                            fn["name"] = tool
                            head.update(id=call_id, type="function")
                        delta: dict[str, Any] = {"tool_calls": [{**head, "function": fn}]}
                        if sent == 0:
                            delta = {"role": "assistant", "content": None, **delta}
                        yield _sse(chunk(delta))
                    elif kind == "chat":
                        delta = {"content": text}
                        if sent == 0:
                            delta = {"role": "assistant", "content": text}
                        yield _sse(chunk(delta))
                    else:
                        yield _sse(chunk(text))
                    sent += len(part)
                    n_chunks += 1
                    if fault == "drop" and n_chunks >= state.faults.drop_after:
                        state.stats["dropped"] += 1
                        raise SimulatedDrop("simulated mid-stream drop")
                yield _sse(chunk({} if kind == "chat" else "", finish))
                if include_usage and s.stream_usage:
                    yield _sse(
                        {
                            "id": cid,
                            "object": "chat.completion.chunk"
                            if kind == "chat"
                            else "text_completion",
                            "created": created,
                            "model": model,
                            "choices": [],
                            "usage": usage,
                        }
                    )
                yield b"data: [DONE]\n\n"
                state.remember(remembered)
                state.stats["ok"] += 1
                state.stats["completion_tokens"] += n_out
            finally:
                release()

        return StreamingResponse(body_iter(), media_type="text/event-stream")

    async def chat(request: Request) -> Response:
        body = await request.json()
        return await generation(request, "chat", render(body.get("messages") or []), body)

    async def completions(request: Request) -> Response:
        body = await request.json()
        prompt = body.get("prompt") or ""
        if isinstance(prompt, list):
            prompt = "".join(str(p) for p in prompt)
        return await generation(request, "text", prompt, body)

    async def embeddings(request: Request) -> Response:
        body = await request.json()
        state.stats["requests"] += 1
        inputs = body.get("input")
        inputs = inputs if isinstance(inputs, list) else [inputs]
        data, total = [], 0
        for i, text in enumerate(inputs):
            text = str(text)
            total += count_tokens(text)
            rnd = random.Random(text)
            data.append(
                {
                    "object": "embedding",
                    "index": i,
                    "embedding": [round(rnd.uniform(-1, 1), 6) for _ in range(8)],
                }
            )
        state.stats["ok"] += 1
        return JSONResponse(
            {
                "object": "list",
                "data": data,
                "model": body.get("model"),
                "usage": {"prompt_tokens": total, "total_tokens": total},
            }
        )

    async def responses(request: Request) -> Response:
        body = await request.json()
        inp = body.get("input")
        text = inp if isinstance(inp, str) else render(inp or [])
        state.stats["requests"] += 1
        prompt = count_tokens(text)
        cached = min(state.cached_prefix(text), prompt)
        n_out = int(body.get("max_output_tokens") or state.spec.completion_tokens)
        await asyncio.sleep((prompt - cached) / state.spec.prefill + n_out / state.spec.decode)
        reply = "".join(reply_tokens(n_out))
        state.remember(text)
        state.stats["ok"] += 1
        usage = {
            "input_tokens": prompt,
            "output_tokens": n_out,
            "total_tokens": prompt + n_out,
            "input_tokens_details": {"cached_tokens": cached},
        }
        resp = {
            "id": f"resp-{state.stats['requests']}",
            "object": "response",
            "status": "completed",
            "model": body.get("model"),
            "output": [
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": reply}],
                }
            ],
            "usage": usage,
        }
        if not body.get("stream"):
            return JSONResponse(resp)

        async def events() -> AsyncIterator[bytes]:
            yield b"event: response.created\n" + _sse(
                {"type": "response.created", "response": {**resp, "status": "in_progress"}}
            )
            yield b"event: response.output_text.delta\n" + _sse(
                {"type": "response.output_text.delta", "delta": reply}
            )
            yield b"event: response.completed\n" + _sse(
                {"type": "response.completed", "response": resp}
            )

        return StreamingResponse(events(), media_type="text/event-stream")

    async def v1_models(request: Request) -> Response:
        return JSONResponse(
            {
                "object": "list",
                "data": [
                    {"id": m, "object": "model", "owned_by": state.spec.publisher}
                    for m in state.spec.models
                ],
            }
        )

    def v0_entry(m: str) -> dict[str, Any]:
        s = state.spec
        return {
            "id": m,
            "object": "model",
            "type": "llm",
            "publisher": s.publisher,
            "arch": s.arch,
            "compatibility_type": s.format,
            "quantization": s.quant,
            "state": "loaded",
            "max_context_length": s.max_context,
            "loaded_context_length": s.context_length,
        }

    async def api_v0_models(request: Request) -> Response:
        return JSONResponse({"object": "list", "data": [v0_entry(m) for m in state.spec.models]})

    async def api_v0_model(request: Request) -> Response:
        m = request.path_params["model"]
        if m not in state.spec.models:
            return _error(404, f"model {m!r} not found")
        return JSONResponse(v0_entry(m))

    async def api_v1_models(request: Request) -> Response:
        s = state.spec
        bits = next((int(c) for c in s.quant if c.isdigit()), None)
        return JSONResponse(
            {
                "models": [
                    {
                        "type": "llm",
                        "publisher": s.publisher,
                        "key": m,
                        "display_name": m,
                        "architecture": s.arch,
                        "quantization": {"name": s.quant, "bits_per_weight": bits},
                        "size_bytes": 1_000_000,
                        "params_string": "1B",
                        "loaded_instances": [
                            {
                                "id": m,
                                "config": {
                                    "context_length": s.context_length,
                                    "parallel": s.parallel,
                                },
                            }
                        ],
                        "max_context_length": s.max_context,
                        "format": s.format,
                        "capabilities": {"vision": False, "trained_for_tool_use": True},
                    }
                    for m in s.models
                ]
            }
        )

    async def fault(request: Request) -> Response:
        if request.method == "POST":
            changes = await request.json()
            refuse_s = changes.pop("refuse_s", None)
            try:
                state.set_faults(**changes)
            except (TypeError, ValueError) as exc:
                return _error(400, str(exc))
            if refuse_s and state.on_refuse:
                state.on_refuse(float(refuse_s))
        return JSONResponse(asdict(state.faults))

    async def stats(request: Request) -> Response:
        return JSONResponse(state.stats)

    app = Starlette(
        routes=[
            Route("/v1/chat/completions", chat, methods=["POST"]),
            Route("/v1/completions", completions, methods=["POST"]),
            Route("/v1/embeddings", embeddings, methods=["POST"]),
            Route("/v1/responses", responses, methods=["POST"]),
            Route("/v1/models", v1_models),
            Route("/api/v0/models", api_v0_models),
            Route("/api/v0/models/{model:path}", api_v0_model),
            *([Route("/api/v1/models", api_v1_models)] if state.spec.api_v1 else []),
            Route("/_fault", fault, methods=["GET", "POST"]),
            Route("/_stats", stats),
        ]
    )
    app.state.host = state
    return app


class TestHost(ThreadedServer):
    """A test host in a background thread: ``with TestHost(prefill=350) as h: h.url``."""

    __test__ = False  # not a pytest class

    def __init__(
        self, *, host: str = "127.0.0.1", port: int = 0, faults: Faults | None = None, **spec: Any
    ) -> None:
        super().__init__(create_app(HostSpec(**spec), faults), host, port)
        self.state: HostState = self.app.state.host
        self.state.on_refuse = self.refuse_for

    @property
    def stats(self) -> dict[str, Any]:
        return dict(self.state.stats)

    def set_faults(self, **changes: Any) -> None:
        self.state.set_faults(**changes)

    def refuse_for(self, seconds: float) -> None:
        """Stop listening (connections are refused) for ``seconds``, then listen again."""

        def cycle() -> None:
            time.sleep(0.05)  # let the /_fault reply leave first
            self.stop()
            time.sleep(seconds)
            self.start()

        threading.Thread(target=cycle, daemon=True).start()


logging.getLogger("uvicorn.error").addFilter(_QuietDrops())
