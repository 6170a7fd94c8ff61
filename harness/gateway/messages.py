"""Anthropic Messages <-> OpenAI chat completions: pure translation, no I/O.

The gateway's ``/v1/messages`` front turns a Messages request into a chat completions
body (``to_chat``), lets the fleet answer it like any OpenAI call, and turns the reply
back: a ``chat.completion`` into a ``message`` (``to_message``), or a stream of
``chat.completion.chunk`` objects into the Messages SSE events (``StreamTranslator``).

Mapping, both ways: ``system`` <-> a system message; ``tool_use`` blocks <-> an assistant
message's ``tool_calls``; ``tool_result`` blocks <-> ``tool`` messages (placed before the
user's other content, which OpenAI requires); ``tools[].input_schema`` <->
``tools[].function.parameters``; ``tool_choice`` any/tool/none <-> required/function/none;
``stop_sequences`` <-> ``stop``. Thinking blocks and server tools have no chat equivalent
and are dropped. Usage: ``input_tokens`` counts the prompt tokens not read from cache,
``cache_read_input_tokens`` the cached ones (as Anthropic reports them).
"""

from __future__ import annotations

import json
import uuid
from typing import Any

MESSAGES = "/v1/messages"
COUNT_TOKENS = "/v1/messages/count_tokens"
ANTHROPIC_VERSION = "2023-06-01"
STOP_REASONS = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "content_filter": "refusal",
}
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    503: "overloaded_error",
    529: "overloaded_error",
}


# ---- request ----------------------------------------------------------------------------
def _text_of(content: Any) -> str:
    """The text of a string or of a list of blocks (non-text blocks skipped)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(
        str(b.get("text", ""))
        for b in content
        if isinstance(b, dict) and b.get("type") == "text" and b.get("text")
    )


def _image_part(block: dict[str, Any]) -> dict[str, Any] | None:
    src = block.get("source") or {}
    if src.get("type") == "base64":
        url = f"data:{src.get('media_type', 'image/png')};base64,{src.get('data', '')}"
    elif src.get("type") == "url":
        url = str(src.get("url", ""))
    else:
        return None
    return {"type": "image_url", "image_url": {"url": url}}


def _tool_result(block: dict[str, Any]) -> dict[str, Any]:
    content = block.get("content")
    text = _text_of(content) if not isinstance(content, str) else content
    if block.get("is_error"):
        text = f"Error: {text}" if text else "Error"
    return {"role": "tool", "tool_call_id": str(block.get("tool_use_id", "")), "content": text}


def _user_messages(content: Any) -> list[dict[str, Any]]:
    """One Anthropic user turn: its tool results first (as ``tool`` messages), then the
    rest as one user message."""
    if isinstance(content, str):
        return [{"role": "user", "content": content}]
    tools: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    for block in content or []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "tool_result":
            tools.append(_tool_result(block))
        elif kind == "text":
            parts.append({"type": "text", "text": str(block.get("text", ""))})
        elif kind == "image":
            image = _image_part(block)
            if image:
                parts.append(image)
        elif kind == "document":
            parts.append({"type": "text", "text": _text_of(block.get("source", {}).get("data"))})
    out = list(tools)
    if parts:
        if all(p["type"] == "text" for p in parts):
            out.append({"role": "user", "content": "\n".join(p["text"] for p in parts)})
        else:
            out.append({"role": "user", "content": parts})
    return out


def _assistant_message(content: Any) -> dict[str, Any]:
    if isinstance(content, str):
        return {"role": "assistant", "content": content}
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for block in content or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            texts.append(str(block.get("text", "")))
        elif block.get("type") == "tool_use":
            calls.append(
                {
                    "id": str(block.get("id", "")),
                    "type": "function",
                    "function": {
                        "name": str(block.get("name", "")),
                        "arguments": json.dumps(block.get("input") or {}),
                    },
                }
            )
    msg: dict[str, Any] = {"role": "assistant", "content": "".join(texts) or None}
    if calls:
        msg["tool_calls"] = calls
    return msg


def _tools(tools: list[Any]) -> list[dict[str, Any]]:
    out = []
    for tool in tools:
        if not isinstance(tool, dict) or "input_schema" not in tool:
            continue  # server tools (web search, ...) have no chat equivalent
        fn: dict[str, Any] = {"name": tool.get("name", ""), "parameters": tool["input_schema"]}
        if tool.get("description"):
            fn["description"] = tool["description"]
        out.append({"type": "function", "function": fn})
    return out


def _tool_choice(choice: Any) -> Any:
    if not isinstance(choice, dict):
        return None
    kind = choice.get("type")
    if kind == "any":
        return "required"
    if kind == "tool":
        return {"type": "function", "function": {"name": choice.get("name", "")}}
    if kind in ("auto", "none"):
        return kind
    return None


def to_chat(body: dict[str, Any]) -> dict[str, Any]:
    """A Messages request as a chat completions request (same model name)."""
    messages: list[dict[str, Any]] = []
    system = _text_of(body.get("system"))
    if system:
        messages.append({"role": "system", "content": system})
    for msg in body.get("messages") or []:
        if not isinstance(msg, dict):
            continue
        if msg.get("role") == "assistant":
            messages.append(_assistant_message(msg.get("content")))
        else:
            messages.extend(_user_messages(msg.get("content")))
    out: dict[str, Any] = {"model": body.get("model", ""), "messages": messages}
    if body.get("max_tokens") is not None:
        out["max_tokens"] = body["max_tokens"]
    for key in ("temperature", "top_p"):
        if body.get(key) is not None:
            out[key] = body[key]
    if body.get("stop_sequences"):
        out["stop"] = list(body["stop_sequences"])
    tools = _tools(body.get("tools") or [])
    if tools:
        out["tools"] = tools
        choice = body.get("tool_choice")
        mapped = _tool_choice(choice)
        if mapped is not None:
            out["tool_choice"] = mapped
        if isinstance(choice, dict) and choice.get("disable_parallel_tool_use"):
            out["parallel_tool_calls"] = False
    if body.get("stream"):
        out["stream"] = True
        out["stream_options"] = {"include_usage": True}
    return out


# ---- reply ------------------------------------------------------------------------------
def message_id() -> str:
    return f"msg_{uuid.uuid4().hex[:24]}"


def to_usage(usage: dict[str, Any] | None) -> dict[str, int]:
    """OpenAI usage as Messages usage."""
    usage = usage or {}
    prompt = int(usage.get("prompt_tokens") or 0)
    details = usage.get("prompt_tokens_details") or {}
    cached = int((details.get("cached_tokens") if isinstance(details, dict) else 0) or 0)
    return {
        "input_tokens": max(0, prompt - cached),
        "output_tokens": int(usage.get("completion_tokens") or 0),
        "cache_read_input_tokens": cached,
        "cache_creation_input_tokens": 0,
    }


def from_usage(usage: dict[str, Any] | None) -> dict[str, Any]:
    """Messages usage as OpenAI usage (a Messages host passed through)."""
    usage = usage or {}
    cached = int(usage.get("cache_read_input_tokens") or 0)
    prompt = (
        int(usage.get("input_tokens") or 0)
        + cached
        + int(usage.get("cache_creation_input_tokens") or 0)
    )
    completion = int(usage.get("output_tokens") or 0)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached},
    }


def _arguments(text: str) -> Any:
    try:
        value = json.loads(text) if text.strip() else {}
    except ValueError:
        return {"_raw": text}  # a model's malformed arguments, kept for the agent to see
    return value if isinstance(value, dict) else {"_value": value}


def to_message(chat: dict[str, Any], model: str) -> dict[str, Any]:
    """A ``chat.completion`` as a Messages ``message``."""
    choice = (chat.get("choices") or [{}])[0]
    msg = choice.get("message") or {}
    content: list[dict[str, Any]] = []
    text = msg.get("content")
    if isinstance(text, list):
        text = _text_of(text)
    if text:
        content.append({"type": "text", "text": text})
    for call in msg.get("tool_calls") or []:
        fn = call.get("function") or {}
        content.append(
            {
                "type": "tool_use",
                "id": call.get("id") or f"toolu_{uuid.uuid4().hex[:20]}",
                "name": fn.get("name", ""),
                "input": _arguments(fn.get("arguments") or ""),
            }
        )
    finish = choice.get("finish_reason")
    stop = "tool_use" if msg.get("tool_calls") else STOP_REASONS.get(finish or "", "end_turn")
    return {
        "id": message_id(),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": to_usage(chat.get("usage")),
    }


def error_body(status: int, body: Any) -> dict[str, Any]:
    """An OpenAI-style (or any) error body as a Messages error; the gateway's own error
    codes (``budget_exceeded``, ``cassette_mismatch`` ...) are kept as the type."""
    err = body.get("error") if isinstance(body, dict) else None
    if isinstance(err, dict):
        message = str(err.get("message") or err)
        code = str(err.get("code") or err.get("type") or "")
    else:
        message = str(err or body)
        code = ""
    default = ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
    kind = code if code in ("budget_exceeded",) else default
    return {"type": "error", "error": {"type": kind, "message": message}}


Event = tuple[str, dict[str, Any]]


class StreamTranslator:
    """Chat completion chunks in, Messages SSE events out (``feed`` then ``finish``)."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.started = False
        self.index = -1  # the open content block, -1 when none
        self.open: str | None = None  # "text" or "tool_use"
        self.tools: dict[int, int] = {}  # OpenAI tool call index -> block index
        self.finish_reason: str | None = None
        self.saw_tool = False
        self.usage: dict[str, Any] | None = None

    def _start(self) -> list[Event]:
        if self.started:
            return []
        self.started = True
        message: dict[str, Any] = {
            "id": message_id(),
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": to_usage(None),
        }
        return [("message_start", {"type": "message_start", "message": message})]

    def _close(self) -> list[Event]:
        if self.open is None:
            return []
        self.open = None
        return [("content_block_stop", {"type": "content_block_stop", "index": self.index})]

    def _block(self, block: dict[str, Any]) -> list[Event]:
        out = self._close()
        self.index += 1
        self.open = block["type"]
        out.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": self.index, "content_block": block},
            )
        )
        return out

    def _delta(self, delta: dict[str, Any]) -> Event:
        return (
            "content_block_delta",
            {"type": "content_block_delta", "index": self.index, "delta": delta},
        )

    def feed(self, chunk: dict[str, Any]) -> list[Event]:
        out = self._start()
        if chunk.get("usage"):
            self.usage = chunk["usage"]
        for choice in chunk.get("choices") or []:
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            text = delta.get("content")
            if text:
                if self.open != "text":
                    out += self._block({"type": "text", "text": ""})
                out.append(self._delta({"type": "text_delta", "text": text}))
            for part in delta.get("tool_calls") or []:
                idx = int(part.get("index", 0))
                fn = part.get("function") or {}
                if idx not in self.tools:
                    self.saw_tool = True
                    block_id = part.get("id") or f"toolu_{uuid.uuid4().hex[:20]}"
                    out += self._block(
                        {"type": "tool_use", "id": block_id, "name": fn.get("name") or "",
                         "input": {}}
                    )  # fmt: skip
                    self.tools[idx] = self.index
                elif self.tools[idx] != self.index:
                    continue  # arguments for a call already closed: not seen in practice
                if fn.get("arguments"):
                    out.append(
                        self._delta({"type": "input_json_delta", "partial_json": fn["arguments"]})
                    )
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
        return out

    def finish(self) -> list[Event]:
        out = self._start() + self._close()
        stop = STOP_REASONS.get(self.finish_reason or "", "end_turn")
        if self.saw_tool:
            stop = "tool_use"
        out.append(
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": to_usage(self.usage),
                },
            )
        )
        out.append(("message_stop", {"type": "message_stop"}))
        return out

    @staticmethod
    def error(message: str, kind: str = "api_error") -> Event:
        return ("error", {"type": "error", "error": {"type": kind, "message": message}})
