"""The test host's configuration, faults and state (``host.py``'s parts).

``HostSpec`` is a host's speed and model artefact, ``Faults`` what it gets wrong,
``HostState`` its queue, prefix cache and counters; the helpers render prompts, count
tokens and shape error and SSE replies the way LM Studio does.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import random
from collections import OrderedDict
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from starlette.responses import JSONResponse

CHARS_PER_TOKEN = 4
WORDS = ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta")


@dataclass
class Faults:
    """Per-request fault probabilities (drawn from a seeded generator) and switches."""

    error_rate: float = 0.0  # 500
    rate_limit_rate: float = 0.0  # 429 with Retry-After
    retry_after: float = 1.0
    drop_rate: float = 0.0  # stream cut after ``drop_after`` chunks
    drop_after: int = 2
    slow_s: float = 0.0  # extra delay before the first byte
    seed: int = 0


@dataclass
class HostSpec:
    models: list[str] = field(default_factory=lambda: ["test-model"])
    quant: str = "Q4_K_M"
    format: str = "gguf"
    arch: str = "qwen3"
    max_context: int = 32768
    context_length: int = 8192
    parallel: int = 1
    prefill: float = 1000.0  # prompt tokens/second
    decode: float = 100.0  # completion tokens/second
    completion_tokens: int = 16  # when the request sets no max_tokens
    cache_entries: int = 8
    publisher: str = "harness"
    api_v1: bool = True  # False: an LM Studio 0.3.x host (/api/v0 only, no parallel slots)
    stream_usage: bool = True  # False: ignore include_usage, as llama-cpp-python's server does


class SimulatedDrop(Exception):
    """Raised inside a streamed body: uvicorn aborts the connection mid-stream."""


class _QuietDrops(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, SimulatedDrop) and not (
            exc is not None
            and isinstance(getattr(exc, "exceptions", None), tuple)
            and any(isinstance(e, SimulatedDrop) for e in getattr(exc, "exceptions", ()))
        )


def render(messages: list[dict[str, Any]]) -> str:
    """Prefix-stable text of a chat: each turn appends to the previous rendering."""
    out = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        out.append(f"<|{m.get('role', 'user')}|>{content or ''}")
        if m.get("tool_calls"):
            out.append(json.dumps(m["tool_calls"], sort_keys=True))
        out.append("\n")
    return "".join(out)


def count_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def chosen_tool(body: dict[str, Any]) -> str | None:
    """The function to call: the one ``tool_choice`` names, or the first tool when it is
    ``"required"``. Otherwise the test host answers with text."""
    tools = body.get("tools") or []
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        return (choice.get("function") or {}).get("name")
    if choice == "required" and tools:
        return (tools[0].get("function") or {}).get("name")
    return None


def reply_tokens(n: int) -> list[str]:
    return [f"{WORDS[i % len(WORDS)]} " for i in range(n)]


class HostState:
    """Mutable state of one test host: spec, faults, cache, counters."""

    def __init__(self, spec: HostSpec, faults: Faults | None = None) -> None:
        self.spec = spec
        self.faults = faults or Faults()
        self.rng = random.Random(self.faults.seed)
        self.cache: OrderedDict[str, None] = OrderedDict()
        self.slots = asyncio.Semaphore(spec.parallel)
        self.stats: dict[str, Any] = {
            "requests": 0,
            "ok": 0,
            "errors": 0,
            "rate_limited": 0,
            "dropped": 0,
            "prefill_tokens": 0,
            "cached_tokens": 0,
            "completion_tokens": 0,
            "max_concurrent": 0,
        }
        self.active = 0
        self.on_refuse: Any = None  # set by TestHost: callable(seconds)

    def set_faults(self, **changes: Any) -> None:
        names = {f.name for f in fields(Faults)}
        unknown = set(changes) - names
        if unknown:
            raise ValueError(f"unknown fault(s): {sorted(unknown)}")
        self.faults = Faults(**{**asdict(self.faults), **changes})
        if "seed" in changes:
            self.rng = random.Random(self.faults.seed)

    def draw_fault(self) -> str | None:
        f = self.faults
        r = self.rng.random()
        for name, rate in (
            ("error", f.error_rate),
            ("rate_limit", f.rate_limit_rate),
            ("drop", f.drop_rate),
        ):
            if r < rate:
                return name
            r -= rate
        return None

    def cached_prefix(self, text: str) -> int:
        best = 0
        for entry in self.cache:
            if entry[:best] != text[:best]:  # cannot beat the best prefix so far
                continue
            lo, hi = best, min(len(entry), len(text))  # binary search on C-speed compares
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if entry[:mid] == text[:mid]:
                    lo = mid
                else:
                    hi = mid - 1
            best = lo
        return best // CHARS_PER_TOKEN

    def remember(self, text: str) -> None:
        self.cache[text] = None
        self.cache.move_to_end(text)
        while len(self.cache) > self.spec.cache_entries:
            self.cache.popitem(last=False)


def _usage(prompt: int, cached: int, completion: int) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached},
    }


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(
        {"error": {"message": message, "type": "test_fault"}}, status_code=status, headers=headers
    )


def _sse(obj: Any) -> bytes:
    return f"data: {json.dumps(obj)}\n\n".encode()
