"""OpenAI wire shapes: server-sent events in and out, folding streamed chunks into one
reply, and turning a plain message (content and/or tool calls) into a proper reply,
non-streamed or as SSE chunks. Shared by the gateway and the cassettes; no I/O.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterable
from typing import Any


class SSEDecoder:
    """Feed lines (without newlines); get ``(event, data)`` pairs at each blank line."""

    def __init__(self) -> None:
        self._event: str | None = None
        self._data: list[str] = []

    def feed(self, line: str) -> tuple[str | None, str] | None:
        line = line.rstrip("\r")
        if not line:
            if not self._data and self._event is None:
                return None
            out = (self._event, "\n".join(self._data))
            self._event, self._data = None, []
            return out
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        return None

    def flush(self) -> tuple[str | None, str] | None:
        return self.feed("")


def sse_bytes(data: Any, event: str | None = None) -> bytes:
    text = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {text}\n\n".encode()


DONE = b"data: [DONE]\n\n"


def usage_numbers(usage: dict[str, Any] | None) -> tuple[int, int, int]:
    """(prompt, cached, completion) from chat/completions or responses-style usage."""
    if not usage:
        return 0, 0, 0
    prompt = usage.get("prompt_tokens", usage.get("input_tokens")) or 0
    completion = usage.get("completion_tokens", usage.get("output_tokens")) or 0
    details = usage.get("prompt_tokens_details") or usage.get("input_tokens_details") or {}
    cached = (details.get("cached_tokens") if isinstance(details, dict) else 0) or 0
    return int(prompt), int(cached), int(completion)


def has_output(chunk: dict[str, Any]) -> bool:
    """Whether a chunk carries generated output (the mark of time to first token)."""
    for choice in chunk.get("choices") or []:
        if choice.get("text"):
            return True
        delta = choice.get("delta") or {}
        if any(
            delta.get(k)
            for k in (
                "content",
                "tool_calls",
                "reasoning_content",
                "reasoning",
                "function_call",
                "refusal",
            )
        ):
            return True
    return False


def _merge_delta(msg: dict[str, Any], delta: dict[str, Any]) -> None:
    for key, value in delta.items():
        if value is None:
            continue
        if key == "tool_calls":
            calls = msg.setdefault("tool_calls", [])
            for part in value:
                idx = part.get("index", len(calls))
                while len(calls) <= idx:
                    calls.append(
                        {"id": None, "type": "function", "function": {"name": "", "arguments": ""}}
                    )
                call = calls[idx]
                if part.get("id"):
                    call["id"] = part["id"]
                if part.get("type"):
                    call["type"] = part["type"]
                fn = part.get("function") or {}
                if fn.get("name"):
                    call["function"]["name"] += fn["name"]
                if fn.get("arguments"):
                    call["function"]["arguments"] += fn["arguments"]
        elif key == "role":
            msg["role"] = value
        elif isinstance(value, str):
            msg[key] = (msg.get(key) or "") + value
        else:
            msg[key] = value


class ChunkAccumulator:
    """Folds chat.completion.chunk / text_completion chunks into one reply."""

    def __init__(self) -> None:
        self.first: dict[str, Any] | None = None
        self.choices: dict[int, dict[str, Any]] = {}
        self.usage: dict[str, Any] | None = None
        self.chunks = 0

    def add(self, chunk: dict[str, Any]) -> None:
        self.chunks += 1
        if self.first is None:
            self.first = chunk
        if chunk.get("usage"):
            self.usage = chunk["usage"]
        for choice in chunk.get("choices") or []:
            idx = choice.get("index", 0)
            acc = self.choices.setdefault(idx, {"index": idx, "finish_reason": None})
            if "delta" in choice:
                msg = acc.setdefault("message", {"role": "assistant", "content": None})
                _merge_delta(msg, choice.get("delta") or {})
            if "text" in choice:
                acc["text"] = acc.get("text", "") + (choice.get("text") or "")
            if choice.get("finish_reason"):
                acc["finish_reason"] = choice["finish_reason"]
            if choice.get("logprobs"):
                lp = acc.setdefault("logprobs", {"content": []})
                lp["content"].extend((choice["logprobs"] or {}).get("content") or [])

    def finished(self) -> bool:
        return any(c.get("finish_reason") for c in self.choices.values())

    def body(self, kind: str, model: str | None = None) -> dict[str, Any]:
        """The non-streamed reply (``chat.completion`` or ``text_completion``)."""
        first = self.first or {}
        choices = []
        for idx in sorted(self.choices):
            c = dict(self.choices[idx])
            c.setdefault("logprobs", None)
            if kind == "chat":
                c.setdefault("message", {"role": "assistant", "content": None})
            else:
                c.setdefault("text", "")
            choices.append(c)
        out = {
            "id": first.get("id") or f"gw-{uuid.uuid4().hex[:12]}",
            "object": "chat.completion" if kind == "chat" else "text_completion",
            "created": first.get("created") or int(time.time()),
            "model": model or first.get("model"),
            "choices": choices,
        }
        if first.get("system_fingerprint"):
            out["system_fingerprint"] = first["system_fingerprint"]
        if self.usage:
            out["usage"] = self.usage
        return out


def normalize_tool_calls(
    calls: Iterable[dict[str, Any]], seed: str = "call"
) -> list[dict[str, Any]]:
    """Hand-written tool calls to wire form: ids, type, arguments as a JSON string."""
    out = []
    for i, call in enumerate(calls):
        fn = call.get("function") or {k: call[k] for k in ("name", "arguments") if k in call}
        args = fn.get("arguments", {})
        if not isinstance(args, str):
            args = json.dumps(args)
        out.append(
            {
                "id": call.get("id") or f"{seed}_{i}",
                "type": call.get("type", "function"),
                "function": {"name": fn.get("name", ""), "arguments": args},
            }
        )
    return out


def estimate_tokens(obj: Any) -> int:
    """About four characters a token: a planning estimate, never billed."""
    if obj is None:
        return 0
    text = obj if isinstance(obj, str) else json.dumps(obj, separators=(",", ":"))
    return max(1, (len(text) + 3) // 4)


def message_reply(
    message: dict[str, Any],
    *,
    model: str,
    usage: dict[str, Any] | None,
    finish_reason: str | None = None,
    reply_id: str | None = None,
) -> dict[str, Any]:
    """A non-streamed chat.completion around ``message``."""
    msg = {"role": "assistant", "content": message.get("content")}
    for k, v in message.items():
        if k not in ("role", "content"):
            msg[k] = v
    if message.get("tool_calls"):
        msg["tool_calls"] = normalize_tool_calls(message["tool_calls"], reply_id or "call")
    finish = finish_reason or ("tool_calls" if msg.get("tool_calls") else "stop")
    out = {
        "id": reply_id or f"chatcmpl-{uuid.uuid4().hex[:12]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": msg, "finish_reason": finish, "logprobs": None}],
    }
    if usage:
        out["usage"] = usage
    return out


def _pieces(text: str, size: int = 16) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def message_chunks(
    message: dict[str, Any],
    *,
    model: str,
    usage: dict[str, Any] | None,
    include_usage: bool,
    finish_reason: str | None = None,
    reply_id: str | None = None,
) -> list[dict[str, Any]]:
    """``message`` as the chat.completion.chunk sequence a streaming server would send."""
    rid = reply_id or f"chatcmpl-{uuid.uuid4().hex[:12]}"
    created = int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": rid,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
        }

    out = [chunk({"role": "assistant", "content": ""})]
    for key in ("reasoning_content",):
        if message.get(key):
            out += [chunk({key: p}) for p in _pieces(message[key])]
    if message.get("content"):
        out += [chunk({"content": p}) for p in _pieces(message["content"])]
    calls = normalize_tool_calls(message.get("tool_calls") or [], rid)
    for i, call in enumerate(calls):
        out.append(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": i,
                            "id": call["id"],
                            "type": call["type"],
                            "function": {"name": call["function"]["name"], "arguments": ""},
                        }
                    ]
                }
            )
        )
        out += [
            chunk({"tool_calls": [{"index": i, "function": {"arguments": p}}]})
            for p in _pieces(call["function"]["arguments"], 24)
        ]
    finish = finish_reason or ("tool_calls" if calls else "stop")
    out.append(chunk({}, finish))
    if include_usage and usage:
        out.append(
            {
                "id": rid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [],
                "usage": usage,
            }
        )
    return out


def text_reply(
    text: str,
    *,
    model: str,
    usage: dict[str, Any] | None,
    finish_reason: str = "stop",
    stream: bool,
    include_usage: bool,
) -> dict[str, Any] | list[dict[str, Any]]:
    """A /v1/completions reply for ``text``: one body, or the chunks of a stream."""
    rid = f"cmpl-{uuid.uuid4().hex[:12]}"
    created = int(time.time())
    base = {"id": rid, "object": "text_completion", "created": created, "model": model}
    if not stream:
        out = {
            **base,
            "choices": [
                {"index": 0, "text": text, "finish_reason": finish_reason, "logprobs": None}
            ],
        }
        if usage:
            out["usage"] = usage
        return out
    chunks = [
        {**base, "choices": [{"index": 0, "text": p, "finish_reason": None, "logprobs": None}]}
        for p in _pieces(text)
    ]
    chunks.append(
        {
            **base,
            "choices": [{"index": 0, "text": "", "finish_reason": finish_reason, "logprobs": None}],
        }
    )
    if include_usage and usage:
        chunks.append({**base, "choices": [], "usage": usage})
    return chunks
