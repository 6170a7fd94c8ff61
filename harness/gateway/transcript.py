"""The conversation as the gateway saw it: one JSON line per answered (or refused) call.

Each line holds the call id (telemetry's ``call``, which has the tokens and times), the
messages that are new since the trial's previous call (a chat request carries the whole
conversation each time: storing only what is new keeps the file linear), the tool names
offered, and the reply (content, tool calls, finish reason) or the error. Bounded: every
text is cut at ``MAX_TEXT`` characters and the file stops growing at ``MAX_BYTES`` (its
last line then says so). ``harness view`` and the board's run page read it.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any, TextIO

MAX_TEXT = 4000
MAX_BYTES = 2_000_000
TRANSCRIPT = "transcript.jsonl"


def cut(value: Any, limit: int = MAX_TEXT) -> Any:
    """``value`` with every string longer than ``limit`` shortened (said so)."""
    if isinstance(value, str):
        return value if len(value) <= limit else f"{value[:limit]}... [{len(value):,} chars]"
    if isinstance(value, list):
        return [cut(v, limit) for v in value]
    if isinstance(value, dict):
        return {k: cut(v, limit) for k, v in value.items()}
    return value


def _tool_names(body: dict[str, Any]) -> list[str]:
    names = []
    for tool in body.get("tools") or []:
        if isinstance(tool, dict):
            fn = tool.get("function") if isinstance(tool.get("function"), dict) else tool
            if isinstance(fn, dict) and fn.get("name"):
                names.append(str(fn["name"]))
    return names


class Transcript:
    """Thread-safe writer of the transcript file (nothing is kept when ``path`` is None)."""

    def __init__(self, path: str | Path | None, max_bytes: int = MAX_BYTES) -> None:
        self.path = Path(path) if path else None
        self.max_bytes = max_bytes
        self.written = 0
        self._seen: dict[str | None, int] = {}  # trial -> messages already transcribed
        self._lock = threading.Lock()
        self._fh: TextIO | None = None
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = self.path.open("a", encoding="utf-8")

    def add(
        self,
        call_id: str,
        trial: str | None,
        endpoint: str,
        body: dict[str, Any],
        reply: dict[str, Any] | None = None,
        error: str | None = None,
    ) -> None:
        if self._fh is None:
            return
        messages = body.get("messages")
        if not isinstance(messages, list):  # completions, responses: the input as sent
            messages = [{"role": "user", "content": body.get("prompt", body.get("input"))}]
        with self._lock:
            seen = self._seen.get(trial, 0)
            start = seen if 0 < seen <= len(messages) else 0  # shorter: a new conversation
            self._seen[trial] = len(messages)
            line: dict[str, Any] = {
                "ts": round(time.time(), 3),
                "call": call_id,
                "trial": trial,
                "endpoint": endpoint,
                "first_message": start,
                "messages": cut(messages[start:]),
                "tools": _tool_names(body),
            }
            if reply is not None:
                line["reply"] = cut(reply)
            if error is not None:
                line["error"] = cut(error, 1000)
            self._write(line)

    def _write(self, line: dict[str, Any]) -> None:
        assert self._fh is not None
        text = json.dumps(line, ensure_ascii=False) + "\n"
        if self.written + len(text) > self.max_bytes:
            note = {"truncated": True, "note": f"transcript stopped at {self.max_bytes:,} bytes"}
            self._fh.write(json.dumps(note) + "\n")
            self._fh.close()
            self._fh = None
            return
        self._fh.write(text)
        self._fh.flush()
        self.written += len(text)

    def close(self) -> None:
        with self._lock:
            if self._fh is not None:
                self._fh.close()
                self._fh = None


def reply_of(body: dict[str, Any] | None) -> dict[str, Any] | None:
    """The assistant's reply in a chat/text completion body (None when there is none)."""
    if not isinstance(body, dict):
        return None
    choice = (body.get("choices") or [{}])[0]
    if not isinstance(choice, dict):
        return None
    message = choice.get("message") or {}
    out: dict[str, Any] = {"finish_reason": choice.get("finish_reason")}
    if message:
        out.update({k: v for k, v in message.items() if v is not None and k != "role"})
    elif "text" in choice:
        out["content"] = choice.get("text")
    return out
