"""Per-call telemetry: one JSON line per call attempt, and the pure arithmetic on it.

A line holds who called (trial, agent), what ran where (model, host, upstream identifier,
the host's artefact), the usage the host reported, the timings the gateway measured, and
the cost: token prices for priced models, energy (busy seconds x watts, shared among the
calls in flight on the host) times a price per kWh for local hosts.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from harness.fleet.calltimes import TRIAL_KEYS, trial_times
from harness.fleet.config import Price

FIELDS = (
    "ts",
    "call",
    "trial",
    "agent",
    "model",
    "requested_model",
    "endpoint",
    "stream",
    "host",
    "upstream",
    "artefact",
    "prompt_tokens",
    "cached_tokens",
    "completion_tokens",
    "ttft_s",
    "total_s",
    "prefill_tps",
    "decode_tps",
    "status",
    "error",
    "incomplete",
    "retry",
    "busy_s",
    "energy_kwh",
    "token_cost_usd",
    "energy_cost_usd",
    "cost_usd",
)


MIN_RATE_TOKENS = 32  # fewer uncached prompt tokens than this say nothing about prefill


def token_cost(price: Price | None, prompt: int, cached: int, completion: int) -> float:
    """USD for one call: uncached input, cached input and output at per-1M-token prices."""
    if price is None:
        return 0.0
    cached = max(0, min(cached, prompt))
    return (
        (prompt - cached) * price.input + cached * price.cached + completion * price.output
    ) / 1_000_000


def energy_kwh(busy_s: float, watts: float | None) -> float:
    """kWh drawn by ``busy_s`` seconds of a host drawing ``watts``."""
    return 0.0 if not watts else busy_s * watts / 3_600_000


def rates(
    prompt: int, cached: int, completion: int, ttft_s: float | None, total_s: float | None
) -> tuple[float | None, float | None]:
    """Prefill and decode tokens/second of one call (None where not measurable)."""
    prefill = decode = None
    new = prompt - cached
    if ttft_s and ttft_s > 0 and new >= MIN_RATE_TOKENS:
        prefill = new / ttft_s
    if ttft_s is not None and total_s and completion > 1 and total_s > ttft_s:
        decode = (completion - 1) / (total_s - ttft_s)
    return prefill, decode


def union_seconds(intervals: Iterable[tuple[float, float]]) -> float:
    """Length of the union of [start, end] intervals: a trial's wall time with the model."""
    total = 0.0
    cur_s = cur_e = 0.0
    started = False
    for s, e in sorted(intervals):
        if not started or s > cur_e:
            if started:
                total += cur_e - cur_s
            cur_s, cur_e, started = s, e, True
        else:
            cur_e = max(cur_e, e)
    if started:
        total += cur_e - cur_s
    return total


class EnergyMeter:
    """Shares a host's busy seconds among its concurrent calls (processor sharing).

    While n calls are in flight, each is charged dt/n of every interval dt, so the charges
    add up to the time the host was busy, never more. Times are passed in: pure and testable.
    """

    def __init__(self) -> None:
        self._active: dict[Any, float] = {}  # key -> ``_shared`` when it started
        self._last = 0.0
        self._shared = 0.0  # what one call has been charged since the host was last idle

    def _advance(self, t: float) -> None:
        if self._active:
            self._shared += max(0.0, t - self._last) / len(self._active)
        self._last = t

    def start(self, key: Any, t: float) -> None:
        self._advance(t)
        if not self._active:
            self._shared = 0.0
        self._active[key] = self._shared

    def stop(self, key: Any, t: float) -> float:
        self._advance(t)
        began = self._active.pop(key, None)
        return 0.0 if began is None else self._shared - began


def summarize(records: Iterable[dict[str, Any]], trial: str | None = None) -> dict[str, Any]:
    """Tokens, calls, wall time and cost over telemetry lines (of one trial, if given).

    ``calls`` counts client calls, ``attempts`` every try (retries included);
    ``budget_refusals`` the calls refused because the trial's budget was spent;
    ``wall_seconds`` is the time with at least one call in flight, ``model_seconds`` the
    sum of call durations; ``busy_seconds`` the hosts' busy time charged to these calls.
    """
    out: dict[str, Any] = {
        "calls": 0,
        "attempts": 0,
        "failed_attempts": 0,
        "incomplete": 0,
        "prompt_tokens": 0,
        "cached_tokens": 0,
        "completion_tokens": 0,
        "model_seconds": 0.0,
        "wall_seconds": 0.0,
        "busy_seconds": 0.0,
        "token_cost_usd": 0.0,
        "energy_cost_usd": 0.0,
        "cost_usd": 0.0,
        "energy_kwh": 0.0,
        "budget_refusals": 0,
        "hosts": {},
    }
    spans = []
    calls: set[Any] = set()
    answered: list[dict[str, Any]] = []
    for r in records:
        if trial is not None and r.get("trial") != trial:
            continue
        if r.get("status") == "budget":  # refused at the gateway: nothing was spent
            out["budget_refusals"] += 1
            continue
        answered.append(r)
        out["attempts"] += 1
        calls.add(r.get("call") or id(r))  # attempts of one client call share its id
        ok = r.get("status") == 200 and not r.get("incomplete")
        if not ok:
            out["failed_attempts"] += 1
        if r.get("incomplete"):
            out["incomplete"] += 1
        for k in ("prompt_tokens", "cached_tokens", "completion_tokens"):
            out[k] += int(r.get(k) or 0)
        total = float(r.get("total_s") or 0.0)
        out["model_seconds"] += total
        out["busy_seconds"] += float(r.get("busy_s") or 0.0)
        for k in ("token_cost_usd", "energy_cost_usd", "cost_usd", "energy_kwh"):
            out[k] += float(r.get(k) or 0.0)
        if r.get("host"):
            out["hosts"][r["host"]] = out["hosts"].get(r["host"], 0) + 1
        if r.get("ts") is not None:
            spans.append((float(r["ts"]), float(r["ts"]) + total))
    out["calls"] = len(calls)
    out["wall_seconds"] = union_seconds(spans)
    for k in ("model_seconds", "wall_seconds", "busy_seconds"):
        out[k] = round(out[k], 6)
    times = trial_times(answered)  # TTFT, prefill/decode rates, cache share (per trial)
    out.update({k: times[k] for k in TRIAL_KEYS if times.get(k) is not None})
    return out


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    p = Path(path)
    if not p.exists():
        return []
    rows = []
    for line in p.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line:
            rows.append(json.loads(line))
    return rows


def trial_usage_from_file(path: str | Path, trial_id: str) -> dict[str, Any]:
    """``summarize`` over a telemetry JSONL file (for a gateway run in a container)."""
    return summarize(read_jsonl(path), trial_id)


class TelemetrySink:
    """Thread-safe: appends lines to a JSONL file (flushed) and reads them back from it,
    so memory stays bounded however many calls a gateway serves. Without a file the lines
    are kept in memory. Only this sink's own lines count (a file may hold older ones)."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path else None
        self._lock = threading.Lock()
        self._records: list[dict[str, Any]] = []  # only without a file
        self._fh: BinaryIO | None = None
        self._start = self._end = 0  # this sink's byte range in the file
        if self.path:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = self.path.open("ab")
            self._start = self._end = self._fh.tell()

    def write(self, record: dict[str, Any]) -> None:
        line = {k: record.get(k) for k in FIELDS}
        line.update({k: v for k, v in record.items() if k not in line})
        data = (json.dumps(line, separators=(",", ":")) + "\n").encode()
        with self._lock:
            if self.path is None:
                self._records.append(line)
            elif self._fh:
                self._fh.write(data)
                self._fh.flush()
                self._end += len(data)

    def lines(self) -> Iterator[dict[str, Any]]:
        """This sink's lines so far, read one at a time."""
        if self.path is None:
            with self._lock:
                rows = list(self._records)
            yield from rows
            return
        with self._lock:
            left = self._end - self._start  # whole lines only: a write in progress is not
        with self.path.open("rb") as fh:
            fh.seek(self._start)
            for raw in fh:
                if left <= 0:
                    break
                left -= len(raw)
                if raw.strip():
                    yield json.loads(raw)

    def records(self, trial: str | None = None) -> list[dict[str, Any]]:
        return [r for r in self.lines() if trial is None or r.get("trial") == trial]

    def trial_usage(self, trial_id: str) -> dict[str, Any]:
        return summarize(self.lines(), trial_id)

    def close(self) -> None:
        with self._lock:
            if self._fh:
                self._fh.close()
                self._fh = None
