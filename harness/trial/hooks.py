"""A trial's lifecycle events, written to ``<run>/trial.log`` and passed to hooks.

Every event is one JSON object on one line of ``<run>/trial.log`` (JSON Lines)::

    {"at": "2026-12-01T11:24:48.123+00:00", "event": "agent-start", "trial": "<run_id>",
     "scenario": "py/x", "turn": 1, ...}

``at`` (ISO 8601, UTC, milliseconds), ``event`` and ``trial`` (the run id) are always
there; the other keys depend on the event (see ``EVENTS``). Lifecycle events a hook
receives are ``start``, ``agent-start``, ``agent-end``, ``verify-start``, ``end`` and
``cancel``; the log also carries ``setup``, ``gateway``, ``verdict`` and ``error``.

A hook is a callable ``hook(event: TrialEvent) -> None``. Register one with
``register_hook(fn)`` or from a plugin package with an entry point in the
``harness.hooks`` group (``name = "pkg.mod:function"``; see ``harness.util.registry``).
A hook that raises is logged as ``hook-error`` and never changes the trial's verdict.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness.util.registry import Registry

LOG_NAME = "trial.log"
LIFECYCLE = ("start", "agent-start", "agent-end", "verify-start", "end", "cancel")
EVENTS: dict[str, str] = {
    "start": "the run folder exists: scenario, agent, model, sandbox, seed asked for",
    "setup": "the workspace the trial runs on: workspace, commit, baseline",
    "agent-start": "an agent turn begins: turn, agent, model, sandbox",
    "gateway": "the agent's gateway is up (url) or was not needed (none)",
    "agent-end": "an agent turn ended: turn, exit, detail, usage (tokens, calls)",
    "verify-start": "verification begins: sandbox, scorer kind",
    "verdict": "the one verdict: outcome, success, score, era, error",
    "end": "the trial ended: outcome, duration_s",
    "cancel": "the trial was stopped by a signal (phase)",
    "error": "a harness error in a phase: phase, error (its one-line cause), kind",
    "hook-error": "a hook raised: hook, error",
}


@dataclass(frozen=True)
class TrialEvent:
    """One event of one trial; ``fields`` are the event's own keys."""

    event: str
    trial: str
    run_dir: Path
    fields: dict[str, Any] = field(default_factory=dict)
    at: str = ""

    def as_json(self) -> dict[str, Any]:
        """The log line's object."""
        return {"at": self.at, "event": self.event, "trial": self.trial, **self.fields}


Hook = Callable[[TrialEvent], None]
HOOKS: Registry[Hook] = Registry("hook", "harness.hooks", {})
_lock = threading.Lock()


def register_hook(name: str, hook: Hook) -> None:
    """Call ``hook`` on every lifecycle event of every trial in this process."""
    HOOKS.register(name, hook)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def seconds_since(iso: str) -> float | None:
    """Seconds from ``iso`` (run.json's ``started_at``) to now; None if it does not parse."""
    try:
        return round((datetime.now(UTC) - datetime.fromisoformat(iso)).total_seconds(), 3)
    except ValueError:
        return None


def error_fields(phase: str, exc: BaseException, turn: int | None = None) -> dict[str, Any]:
    """An ``error`` event's keys: the phase, the one-line cause and the error's kind."""
    one_line = getattr(exc, "one_line", None)
    cause = one_line() if callable(one_line) else f"{type(exc).__name__}: {exc}"
    out: dict[str, Any] = {"phase": phase, "error": cause, "kind": type(exc).__name__}
    if turn is not None:
        out["turn"] = turn
    return out


def emit(run_dir: Path, trial: str, event: str, **fields: Any) -> None:
    """Append ``event`` to ``<run_dir>/trial.log`` and, for lifecycle events, call hooks."""
    ev = TrialEvent(event, trial, run_dir, fields, _now())
    _write(run_dir, ev.as_json())
    if event not in LIFECYCLE:
        return
    for name in HOOKS.names():
        try:
            HOOKS.load(name)(ev)
        except Exception as exc:  # a plugin's fault is logged, never the trial's
            _write(
                run_dir,
                TrialEvent(
                    "hook-error", trial, run_dir, {"hook": name, "error": repr(exc)}, _now()
                ).as_json(),
            )


def _write(run_dir: Path, obj: dict[str, Any]) -> None:
    line = json.dumps(obj, default=str, sort_keys=False) + "\n"
    with _lock, (run_dir / LOG_NAME).open("a", encoding="utf-8") as fh:
        fh.write(line)


def read_log(run_dir: Path) -> list[dict[str, Any]]:
    """The events of ``<run_dir>/trial.log`` in order (none when it does not exist)."""
    path = run_dir / LOG_NAME
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


__all__ = [
    "EVENTS",
    "HOOKS",
    "LIFECYCLE",
    "LOG_NAME",
    "TrialEvent",
    "emit",
    "error_fields",
    "read_log",
    "register_hook",
    "seconds_since",
]
