"""Cassettes: recorded model traffic that the gateway can replay without any host.

A cassette is a JSON list (or ``{"interactions": [...]}``) or a JSONL file of
interactions, served in order. Written by hand it can be this small::

    {"request": {"last_message": {"content": {"$contains": "list the files"}}},
     "response": {"tool_calls": [{"name": "bash", "arguments": {"command": "ls"}}]}}

``request`` is matched as a subset of what the client sent: only the keys given are
compared; lists compare item by item; ``{"$contains": s}``, ``{"$regex": r}`` and
``{"$any": true}`` loosen a value; ``last_message`` matches the last chat message and
``endpoint`` the path (default ``/v1/chat/completions``). An interaction's ``agent``
(the first one that has it names the cassette's: ``--record`` writes it on every one)
is the agent it was recorded with: another agent's trial is refused at its first call,
before an answer meant for another CLI is served. Keys starting with ``_`` are
comments. ``response`` is a message (``content`` and/or ``tool_calls``, optionally
``message``, ``finish_reason``, ``usage``), ``text`` for /v1/completions, ``chunks``
(a recorded stream), ``raw`` (a recorded body), or ``status`` + ``error`` for a failure.
The gateway turns a message into a non-streamed reply or SSE chunks to suit the request.
"""

from __future__ import annotations

import difflib
import json
import re
import threading
from pathlib import Path
from typing import Any, TextIO

from harness.errors import UserError

CHAT = "/v1/chat/completions"


class CassetteMismatch(Exception):
    """A request differs from its recording; ``diff`` says where, readably."""

    def __init__(self, index: int, diff: str) -> None:
        self.index = index
        self.diff = diff
        super().__init__(f"request #{index + 1} does not match the cassette:\n{diff}")


class CassetteOfAnotherAgent(CassetteMismatch):
    """The cassette was recorded with another agent: the set-up is wrong (a harness
    fault), not the agent's request."""


class CassetteExhausted(Exception):
    def __init__(self, index: int) -> None:
        self.index = index
        super().__init__(
            f"request #{index + 1} has no recording: the cassette holds {index} interaction(s)"
        )


def _short(value: Any, limit: int = 160) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _operator(exp: Any) -> str | None:
    if isinstance(exp, dict) and len(exp) == 1:
        key = next(iter(exp))
        if key in ("$contains", "$regex", "$any"):
            return str(key)
    return None


def mismatches(expected: Any, actual: Any, path: str = "request") -> list[str]:
    """Where ``actual`` fails to match ``expected`` (subset rules above), one line each."""
    op = _operator(expected)
    if op == "$any":
        return []
    if op == "$contains":
        needle = expected[op]
        hay = actual if isinstance(actual, str) else json.dumps(actual, ensure_ascii=False)
        return (
            []
            if needle in hay
            else [f"{path}: expected to contain {_short(needle)}, got {_short(actual)}"]
        )
    if op == "$regex":
        hay = actual if isinstance(actual, str) else json.dumps(actual, ensure_ascii=False)
        return (
            []
            if re.search(expected[op], hay)
            else [f"{path}: expected to match /{expected[op]}/, got {_short(actual)}"]
        )
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{path}: expected an object, got {_short(actual)}"]
        out = []
        for k, v in expected.items():
            if k.startswith("_"):
                continue
            if k not in actual:
                out.append(f"{path}.{k}: missing (expected {_short(v)})")
            else:
                out += mismatches(v, actual[k], f"{path}.{k}")
        return out
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return [f"{path}: expected a list, got {_short(actual)}"]
        out = []
        if len(expected) != len(actual):
            out.append(f"{path}: expected {len(expected)} item(s), got {len(actual)}")
        for i, (e, a) in enumerate(zip(expected, actual, strict=False)):
            out += mismatches(e, a, f"{path}[{i}]")
        return out
    if expected != actual:
        return [f"{path}: expected {_short(expected)}, got {_short(actual)}"]
    return []


def _project(expected: Any, actual: Any) -> Any:
    """``actual`` cut down to the shape of ``expected``, for a side-by-side diff."""
    if isinstance(expected, dict) and not _operator(expected) and isinstance(actual, dict):
        return {
            k: _project(v, actual.get(k, "<missing>"))
            for k, v in expected.items()
            if not k.startswith("_")
        }
    if isinstance(expected, list) and isinstance(actual, list):
        return [_project(e, a) for e, a in zip(expected, actual, strict=False)] + actual[
            len(expected) :
        ]
    return actual


def request_view(endpoint: str, body: dict[str, Any]) -> dict[str, Any]:
    """What a cassette's ``request`` is matched against."""
    view = {"endpoint": endpoint, **body}
    msgs = body.get("messages")
    if isinstance(msgs, list) and msgs:
        view["last_message"] = msgs[-1]
    return view


def match(interaction: dict[str, Any], endpoint: str, body: dict[str, Any]) -> list[str]:
    expected = dict(interaction.get("request") or {})
    expected.setdefault("endpoint", interaction.get("endpoint", CHAT))
    return mismatches(expected, request_view(endpoint, body))


def diff_text(
    interaction: dict[str, Any], endpoint: str, body: dict[str, Any], problems: list[str]
) -> str:
    expected = dict(interaction.get("request") or {})
    expected.setdefault("endpoint", interaction.get("endpoint", CHAT))
    actual = _project(expected, request_view(endpoint, body))
    exp_lines = json.dumps(expected, indent=2, ensure_ascii=False).splitlines()
    act_lines = json.dumps(actual, indent=2, ensure_ascii=False).splitlines()
    udiff = difflib.unified_diff(exp_lines, act_lines, "cassette", "request", lineterm="", n=2)
    return "\n".join([*(f"- {p}" for p in problems), *udiff])


def load_interactions(path: str | Path) -> list[dict[str, Any]]:
    p = Path(path)
    if not p.is_file():
        raise UserError("cassette not found", file=p, fix="check the --replay path")
    text = p.read_text(encoding="utf-8")
    items: Any
    try:
        if p.suffix == ".jsonl":
            items = [json.loads(line) for line in text.splitlines() if line.strip()]
        else:
            data = json.loads(text)
            items = data.get("interactions") if isinstance(data, dict) else data
    except json.JSONDecodeError as exc:
        raise UserError(f"not valid JSON: {exc.msg}", file=p, field=f"line {exc.lineno}") from None
    if not isinstance(items, list):
        raise UserError(
            "a cassette is a list of interactions",
            file=p,
            fix='write [{"request": {...}, "response": {...}}, ...]',
        )
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("response"), dict):
            raise UserError(
                "each interaction needs a 'response' object", file=p, field=f"interactions[{i}]"
            )
    return items


def model_mismatch(path: str | Path, model_id: str) -> str | None:
    """What the cassette's first request expects of ``model`` when ``model_id`` does not
    match it (None when it matches or the cassette does not say): caught before a run."""
    items = load_interactions(path)
    expected = (items[0].get("request") or {}).get("model") if items else None
    if expected is None:
        return None
    problems = mismatches(expected, model_id, "model")
    return problems[0] if problems else None


def check_model(path: str | Path, model_id: str) -> None:
    """Refuse a cassette recorded for another model before anything is written."""
    wrong = model_mismatch(path, model_id)
    if wrong is not None:
        raise UserError(
            f"the cassette was recorded for another model ({wrong})",
            file=path,
            field="--model",
            fix="pass the model it was recorded with (the shipped cassettes: --model replay)",
        )


def recorded_agent(items: list[dict[str, Any]]) -> str | None:
    """The agent a cassette was recorded with (the first interaction's ``agent``), if any."""
    for item in items:
        if isinstance(item.get("agent"), str) and item["agent"]:
            return str(item["agent"])
    return None


class Replayer:
    """Serves interactions in order; a mismatch does not advance the cassette."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.interactions = load_interactions(path)
        self.agent = recorded_agent(self.interactions)
        self.position = 0
        self._lock = threading.Lock()

    def next(
        self, endpoint: str, body: dict[str, Any], agent: str | None = None
    ) -> tuple[int, dict[str, Any]]:
        """The next interaction for a request of ``agent`` (the trial's, when known)."""
        with self._lock:
            i = self.position
            if i == 0 and agent and self.agent and agent != self.agent:
                raise CassetteOfAnotherAgent(
                    0, f"- agent: recorded with {self.agent!r}, this trial runs {agent!r}"
                )
            if i >= len(self.interactions):
                raise CassetteExhausted(i)
            item = self.interactions[i]
            problems = match(item, endpoint, body)
            if problems:
                raise CassetteMismatch(i, diff_text(item, endpoint, body, problems))
            self.position += 1
            return i, item

    @property
    def remaining(self) -> int:
        return len(self.interactions) - self.position


class Recorder:
    """Appends each interaction to a JSONL cassette as it completes (flushed)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._fh: TextIO | None = self.path.open("w", encoding="utf-8")
        self.count = 0

    def add(
        self,
        endpoint: str,
        request: dict[str, Any],
        response: dict[str, Any],
        meta: dict[str, Any] | None = None,
        agent: str | None = None,
    ) -> None:
        item: dict[str, Any] = {"endpoint": endpoint, "request": request, "response": response}
        if agent:
            item["agent"] = agent
        if meta:
            item["_meta"] = meta
        with self._lock:
            if self._fh is None:
                return
            self._fh.write(json.dumps(item, ensure_ascii=False) + "\n")
            self._fh.flush()
            self.count += 1

    def close(self) -> None:
        with self._lock:
            if self._fh:
                self._fh.close()
                self._fh = None
