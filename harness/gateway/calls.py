"""What one client call is while the gateway works on it: the call, its attempts on hosts,
an answer that has begun, and the errors that steer retries."""

from __future__ import annotations

import email.utils
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx
from starlette.responses import JSONResponse

from harness.fleet import wire
from harness.fleet.router import Job

CHAT = "/v1/chat/completions"
COMPLETIONS = "/v1/completions"
EMBEDDINGS = "/v1/embeddings"
RESPONSES = "/v1/responses"
RETRYABLE_STATUS = {404, 408, 409, 429, 500, 502, 503, 504}


@dataclass(frozen=True)
class KeyInfo:
    trial: str | None
    agent: str | None = None
    model: str | None = None


#: every field by which a call names its generation limit, where a host reads one
#: (``n_predict``: llama.cpp's own); the first of each endpoint's is set where none is given
OUTPUT_LIMITS = {RESPONSES: ("max_output_tokens",)}
CHAT_LIMITS = ("max_tokens", "max_completion_tokens", "n_predict")


def cap_output(body: dict[str, Any], cap: int, endpoint: str) -> dict[str, Any]:
    """``body`` with the tokens the call may generate lowered to ``cap``: every limit field
    the call gives is set to ``cap`` unless it is a positive integer below it (a string, a
    float, ``-1`` or a bigger number does not slip past), and the endpoint's own field is
    set where the call named none. Embeddings generate nothing."""
    if endpoint == EMBEDDINGS:
        return body
    names = OUTPUT_LIMITS.get(endpoint, CHAT_LIMITS)
    given = [n for n in names if body.get(n) is not None]
    out = dict(body)
    for name in given or names[:1]:
        value = body.get(name)
        ok = isinstance(value, int) and not isinstance(value, bool) and 0 < value <= cap
        out[name] = value if ok else cap
    return out


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
    body: dict[str, Any]
    stream: bool
    include_usage: bool
    candidates: list[str]
    job: Job
    tried: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    rate_limited_s: float | None = None  # wall-clock spent on 429s when they won
    raw: bytes | None = field(default=None, repr=False)  # the bytes ``raw_of`` came from
    raw_of: dict[str, Any] | None = field(default=None, repr=False)

    @property
    def sent_bytes(self) -> bytes | None:
        """The bytes the client sent, while ``body`` is still what was parsed from them
        (a body replaced since, e.g. by a cap on its output, has none)."""
        return self.raw if self.raw_of is self.body else None

    @property
    def kind(self) -> str:
        return "chat" if self.endpoint == CHAT else "text"


@dataclass
class Attempt:
    """One try on one host; ``Accounting.finish`` turns it into a telemetry line."""

    call: Call
    host: str
    upstream: str
    retry: int
    had_slot: bool
    ts: float = field(default_factory=time.time)
    t0: float = field(default_factory=time.monotonic)
    ttft_s: float | None = None
    ttft_reported: bool = False  # ttft_s is the host's own figure (a non-streamed reply)
    first_chunk_s: float | None = None
    usage: dict[str, Any] | None = None
    timings: dict[str, float] | None = None  # the engine's own (llama.cpp), as it sent them
    engine_usage: dict[str, int] | None = None  # the host's ``usage`` numbers, as it sent them
    status: int | str | None = None
    error: str | None = None
    incomplete: bool = False
    done: bool = False
    accepted: bool = False  # the host answered 200: a later break is the stream's, not a connect
    output_chunks: int = 0  # chunks that carried output (tokens relayed, if the stream breaks)
    token: Any = None  # the router's lease while in flight; None once finished

    def mark_chunk(self, has_output: bool) -> None:
        now = time.monotonic() - self.t0
        if self.first_chunk_s is None:
            self.first_chunk_s = now
        if has_output:
            self.output_chunks += 1
            if self.ttft_s is None:
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
    json_body: dict[str, Any] | None = None
    raw_body: bytes | None = None  # the bytes json_body was parsed from
    taken: dict[str, Any] | None = None  # the first event's chunk, already taken in


def error_response(
    status: int, message: str, kind: str = "gateway_error", headers: dict[str, str] | None = None
) -> JSONResponse:
    """An OpenAI-style error body: ``{"error": {"message", "type", "code"}}``."""
    return JSONResponse(
        {"error": {"message": message, "type": kind, "code": kind}},
        status_code=status,
        headers=headers,
    )


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


def prompt_estimate(body: dict[str, Any]) -> int:
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


def snippet(content: bytes | str, limit: int = 300) -> str:
    text = content.decode("utf-8", "replace") if isinstance(content, bytes) else content
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def rnd(value: float | None, nd: int = 4) -> float | None:
    return None if value is None else round(value, nd)
